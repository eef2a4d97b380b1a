/**
 * Prisma reports a unique-constraint violation as a known request error with code P2002.
 * Checked by shape, so it works with every service's generated client.
 */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}

/**
 * Runs a creating command at most once per request id (gRPC commands carry one so a caller
 * may repeat them): an earlier result is answered again, and a concurrent repeat that lost
 * the race on the unique request id answers with the winner's result. Other unique
 * violations propagate to the caller.
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
