import type { EmbeddedOptions } from './embedded.ts';
import { tryJoin } from './joined.ts';
import type { RuntimeClient } from './types.ts';

export type { ClientSubmit, DecideResult, RuntimeClient } from './types.ts';
export { ClientError } from './errors.ts';

/**
 * The runtime a surface talks to: the one running on the config's state dir (`snotra start`),
 * joined over its join socket, or, only when none runs, one started in this process. A stale
 * socket or lock (a runtime that died) falls through to the embedded runtime, which recovers the
 * lock as before.
 */
export async function openRuntimeClient(o: EmbeddedOptions): Promise<RuntimeClient> {
  const joined = await tryJoin(o.loaded.config.stateDir, o.onRunEvent);
  if (joined !== null) return joined;
  // Loaded only now: a surface that joins never loads the runtime's modules (bus, store, XState).
  const { openEmbedded } = await import('./embedded.ts');
  return openEmbedded(o);
}
