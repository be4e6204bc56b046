import type { SecretEnv } from './reference.ts';
import type { SecretRegistry } from './resolver.ts';
import type { SecretStore } from './store.ts';

/** A store that holds its values in this process (env, memory) and can hand them all over. */
export interface HeldSecrets {
  heldValues(): Iterable<string>;
}

const MAX_DEPTH = 32;

/** The names of every secret reference (`{ "secret": "name" }`) anywhere in a config. */
export function secretNamesIn(config: unknown): Set<string> {
  return referencesIn(config).names;
}

/** The variables every `{ "env": "VARIABLE" }` reference anywhere in a config names. */
export function envNamesIn(config: unknown): Set<string> {
  return referencesIn(config).variables;
}

function referencesIn(config: unknown): { names: Set<string>; variables: Set<string> } {
  const names = new Set<string>();
  const variables = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const item of v) walk(item, depth + 1);
      return;
    }
    const keys = Object.keys(v);
    const secret = (v as { secret?: unknown }).secret;
    if (keys.length === 1 && typeof secret === 'string') names.add(secret);
    const variable = (v as { env?: unknown }).env;
    if (keys.length === 1 && typeof variable === 'string') variables.add(variable);
    for (const k of keys) walk((v as Record<string, unknown>)[k], depth + 1);
  };
  walk(config, 0);
  return { names, variables };
}

function holds(store: SecretStore): store is SecretStore & HeldSecrets {
  return typeof (store as Partial<HeldSecrets>).heldValues === 'function';
}

/**
 * Registers with the redactor, at boot, every secret value the runtime can know of: each one the
 * config references (`{ "secret" }` from the store, `{ "env" }` from the environment), and every value a process-held store (env, memory) carries. The resolver
 * registers a value only when a tool or provider first uses it; until then a value the model
 * learned elsewhere (a file it read, a user's message) and put into a tool argument would be
 * persisted and shown unredacted. A reference that does not resolve is not an error here: the
 * place that uses it reports it, naming the secret.
 */
export async function registerKnownSecrets(
  config: unknown,
  store: SecretStore | undefined,
  registry: SecretRegistry,
  env: SecretEnv = process.env,
): Promise<number> {
  let registered = 0;
  for (const variable of envNamesIn(config)) {
    const value = Object.hasOwn(env, variable) ? env[variable] : undefined;
    if (value !== undefined && value !== '') registered += registry.registerSecret(value) ? 1 : 0;
  }
  if (store === undefined) return registered;
  if (holds(store)) {
    for (const value of store.heldValues())
      if (value !== '') registered += registry.registerSecret(value) ? 1 : 0;
  }
  for (const name of secretNamesIn(config)) {
    let value: string | null = null;
    try {
      value = await store.get(name);
    } catch {
      continue;
    }
    if (value !== null && value !== '') registered += registry.registerSecret(value) ? 1 : 0;
  }
  return registered;
}
