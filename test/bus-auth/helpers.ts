import { rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import {
  embeddedBusAuth,
  type BusUserCredentials,
  type EmbeddedBusAuth,
} from '../../runtime/bus/auth/index.ts';
import { startEmbeddedNats, type EmbeddedNats } from '../../runtime/bus/index.ts';
import { MIN_WAIT_MS } from '../support/min-wait.ts';

/** A real embedded nats-server in operator mode (per-actor auth) in a fresh state dir. */
export async function startAuthNats(): Promise<{
  nats: EmbeddedNats;
  auth: EmbeddedBusAuth;
  stateDir: string;
  cleanup: () => Promise<void>;
}> {
  const stateDir = mkdtempSync(join(tmpdir(), 'snotra-busauth-'));
  const auth = embeddedBusAuth(stateDir);
  const nats = await startEmbeddedNats({
    stateDir,
    stopGraceMs: 2000,
    auth: { configLines: auth.configLines, credentials: auth.gateway },
  });
  return {
    nats,
    auth,
    stateDir,
    cleanup: async () => {
      await nats.stop();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** A raw v3 connection with user credentials (the client an escaping actor would use). */
export function rawConnect(
  url: string,
  creds: BusUserCredentials,
  inboxPrefix?: string,
): Promise<NatsConnection> {
  return connect({
    servers: url,
    authenticator: jwtAuthenticator(creds.jwt, creds.seed),
    reconnect: false,
    timeout: 5000,
    ...(inboxPrefix === undefined ? {} : { inboxPrefix }),
  });
}

/** Polls `check` until it is true or `timeoutMs` passes. */
export async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const end = Date.now() + Math.max(timeoutMs, MIN_WAIT_MS);
  while (!check()) {
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
