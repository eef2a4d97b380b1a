/**
 * Configuration comes from the environment only. A missing required variable stops
 * the process at boot with a message naming it, rather than failing on first use.
 */
export class ConfigError extends Error {}

export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigError(`missing required environment variable ${name}`);
  return value;
}

export function optionalEnv(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

export function intEnv(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = optionalEnv(name, env);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new ConfigError(`environment variable ${name} must be an integer, got '${raw}'`);
  return value;
}
