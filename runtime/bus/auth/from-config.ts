import { ConfigError } from '../../config/errors.ts';
import type { LoadedConfig } from '../../config/load.ts';
import { embeddedBusAuth, type EmbeddedBusAuth } from './setup.ts';

/**
 * The per-actor auth of a runtime's embedded server when `bus.auth` is `"per-actor"`, else null
 * (token auth). With `bus.url` (an existing NATS) the runtime cannot mint credentials that server
 * trusts unless it holds that account's signing key, which config cannot give yet: that
 * combination is a ConfigError naming `bus.auth`.
 */
export function busAuthFromConfig(loaded: LoadedConfig): EmbeddedBusAuth | null {
  const { auth, url } = loaded.config.bus;
  if (auth !== 'per-actor') return null;
  if (url !== undefined) {
    throw new ConfigError(loaded.file ?? '(config)', [
      'bus.auth: "per-actor" works with the embedded server only; remove bus.url or set bus.auth to "token"',
    ]);
  }
  return embeddedBusAuth(loaded.config.stateDir);
}
