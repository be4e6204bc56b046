/** Configured variables of a tool's children, with secret references resolved at call time. */
import type { ChildEnvEntry } from './process-runner.ts';
import type { SecretReference, SecretResolver } from './types.ts';

/** A configured variable: a literal value, or a reference to a secret (store entry or variable). */
export type ConfiguredEnvValue = string | SecretReference;

/**
 * Resolves configured variables for one call. Secret references are resolved through `secrets`
 * (which registers each value with the redactor before returning it) and marked `secret`, so the
 * supervisor accepts credential-like names only for them.
 */
export async function resolveConfiguredEnv(
  config: Readonly<Record<string, ConfiguredEnvValue>> | undefined,
  secrets: SecretResolver,
): Promise<ChildEnvEntry[]> {
  const entries: ChildEnvEntry[] = [];
  for (const [name, value] of Object.entries(config ?? {})) {
    if (typeof value === 'string') entries.push({ name, value, source: 'config' });
    else entries.push({ name, value: await secrets.resolve(value), source: 'secret' });
  }
  return entries;
}
