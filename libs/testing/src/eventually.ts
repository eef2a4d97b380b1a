/** Polls until `check` returns a value, or fails naming what it waited for. (tests/mesh/test/mesh.ts has the same; it may import this one.) */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
