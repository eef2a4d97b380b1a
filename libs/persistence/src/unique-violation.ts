/**
 * Prisma reports a unique-constraint violation as a known request error with code P2002.
 * Checked by shape, so it works with every service's generated client.
 */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}
