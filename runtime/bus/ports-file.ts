import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { isProcessAlive } from './processes.ts';

const PortsFile = z.object({ nats: z.array(z.string()).min(1) });
const PORTS_NAME = /^nats-server_(\d+)\.ports$/;

/** The client URL and port read from a ports file. */
export interface NatsListen {
  readonly url: string;
  readonly port: number;
}

/** The ports file nats-server writes for `pid` under `--ports_file_dir dir`. */
export function portsFilePath(dir: string, pid: number): string {
  return join(dir, `nats-server_${pid}.ports`);
}

/**
 * Parses a ports file. Returns null unless it is complete JSON naming a `nats://127.0.0.1:<port>`
 * listener (a partially written file, or a non-loopback listener, is never accepted).
 */
export function parsePortsFile(text: string): NatsListen | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = PortsFile.safeParse(raw);
  if (!parsed.success) return null;
  for (const u of parsed.data.nats) {
    const m = /^nats:\/\/127\.0\.0\.1:(\d{1,5})$/.exec(u);
    const port = Number(m?.[1]);
    if (m !== null && port > 0 && port < 65536) return { url: u, port };
  }
  return null;
}

/**
 * Waits for the ports file of `pid` until it names a loopback listener. Resolves null when `deadline`
 * (epoch ms) passes or `stillRunning()` turns false first. It looks again whenever `wakeups`
 * signals (the server's log output: it logs as it opens its listeners and writes the file), and
 * otherwise polls every `pollMs`.
 */
export async function waitForPortsFile(
  dir: string,
  pid: number,
  deadline: number,
  stillRunning: () => boolean,
  wakeups?: (wake: () => void) => () => void,
  pollMs = 15,
): Promise<NatsListen | null> {
  const file = portsFilePath(dir, pid);
  let wake: () => void = () => {};
  const unsubscribe = wakeups?.(() => wake()) ?? (() => {});
  try {
    for (;;) {
      try {
        const listen = parsePortsFile(readFileSync(file, 'utf8'));
        if (listen !== null) return listen;
      } catch {
        // not written yet
      }
      if (!stillRunning() || Date.now() >= deadline) return null;
      await new Promise<void>((r) => {
        const timer = setTimeout(r, Math.max(1, Math.min(pollMs, deadline - Date.now())));
        wake = () => {
          clearTimeout(timer);
          r();
        };
      });
      wake = () => {};
    }
  } finally {
    unsubscribe();
  }
}

/** Removes ports files left by servers that are no longer running (after a crash or SIGKILL). */
export function removeStalePortsFiles(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = PORTS_NAME.exec(name);
    if (m !== null && !isProcessAlive(Number(m[1]))) rmSync(join(dir, name), { force: true });
  }
}
