import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import {
  startEmbeddedNats,
  type BusLogger,
  type EmbeddedNats,
  type EmbeddedNatsOptions,
} from '../../runtime/bus/index.ts';
import { isProcessAlive } from '../../runtime/bus/processes.ts';
import { MIN_WAIT_MS, pollDelayMs } from '../support/min-wait.ts';

/** A fresh temporary state dir; remove it with `rmSync(dir, { recursive: true, force: true })`. */
export function tempStateDir(): string {
  return mkdtempSync(join(tmpdir(), 'snotra-bus-'));
}

/** Starts an embedded server in a fresh state dir; `cleanup()` stops it and removes the dir. */
export async function startTestNats(
  extra: Partial<EmbeddedNatsOptions> = {},
): Promise<{ nats: EmbeddedNats; stateDir: string; cleanup: () => Promise<void> }> {
  const stateDir = tempStateDir();
  const nats = await startEmbeddedNats({ stateDir, stopGraceMs: 2000, ...extra });
  return {
    nats,
    stateDir,
    cleanup: async () => {
      await nats.stop();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Pids of live (non-zombie) processes whose process group is `pgid` (Linux /proc). */
export function livePidsInGroup(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && isProcessAlive(Number(name)))
        out.push(Number(name));
    } catch {
      // process vanished while reading
    }
  }
  return out;
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last result. */
export async function eventually(check: () => boolean, timeoutMs: number, pollMs = 25): Promise<boolean> {
  const start = Date.now();
  const end = start + Math.max(timeoutMs, MIN_WAIT_MS);
  while (!check()) {
    const now = Date.now();
    if (now >= end) return false;
    await new Promise((r) => setTimeout(r, pollDelayMs(now - start, pollMs)));
  }
  return true;
}

/**
 * A real nats-server and a client connection to it for agent queue tests, started before the
 * file's tests and stopped after them (its own beforeAll/afterAll), with a logger that keeps
 * every warning and error message (`warnings`). Call it at the top level of a test file.
 */
export function useQueueTestServer() {
  const warnings: string[] = [];
  const logger = {
    debug: () => {},
    info: () => {},
    warn: (_o: unknown, msg?: string) => void warnings.push(String(msg)),
    error: (_o: unknown, msg?: string) => void warnings.push(String(msg)),
  } as unknown as BusLogger;
  let nc: NatsConnection | null = null;
  let cleanup: (() => Promise<void>) | null = null;
  beforeAll(async () => {
    const started = await startTestNats();
    cleanup = started.cleanup;
    const creds = started.nats.target().credentials as { token: string };
    nc = await connect({ servers: started.nats.url, token: creds.token });
  }, 60_000);
  afterAll(async () => {
    await nc?.close().catch(() => {});
    await cleanup?.();
  });
  return {
    warnings,
    logger,
    /** The client connection (once the file's tests run). */
    nc(): NatsConnection {
      if (nc === null) throw new Error('useQueueTestServer: the server is not started yet');
      return nc;
    },
  };
}
