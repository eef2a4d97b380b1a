import { Prisma } from '../generated/prisma/client';

export const CLOCK = Symbol('CLOCK');
export type Clock = () => Date;

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/**
 * Runs a creating command at most once per request id: an earlier result is answered
 * again, and a concurrent repeat that lost the race on the unique request id answers
 * with the winner's result. Other unique violations propagate to the caller.
 */
export async function createOnce<T>(requestId: string | null, findEarlier: (requestId: string) => Promise<T | undefined>, create: () => Promise<T>): Promise<T> {
  if (requestId) {
    const earlier = await findEarlier(requestId);
    if (earlier) return earlier;
  }
  try {
    return await create();
  } catch (error) {
    if (requestId && isUniqueViolation(error)) {
      const earlier = await findEarlier(requestId);
      if (earlier) return earlier;
    }
    throw error;
  }
}
