import { request } from 'node:http';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIN_WAIT_MS, pollDelayMs } from '../support/min-wait.ts';

/** An answer as the wire carried it. */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json(): unknown;
}

/**
 * One raw HTTP request to 127.0.0.1:port: the path is sent exactly as given (no normalization),
 * `Host` defaults to 127.0.0.1:port and can be replaced or removed.
 */
export function call(
  port: number,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer; noHost?: boolean } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: `127.0.0.1:${port}`, ...opts.headers };
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, setHost: false, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** A temp dir with a config (`snotra.config.json`) and per-agent scripts. */
export function configDir(config: Record<string, unknown>, scripts: Record<string, unknown[]>): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-sidecar-')));
  mkdirSync(join(dir, 'project'));
  for (const [name, steps] of Object.entries(scripts))
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(steps));
  writeFileSync(
    join(dir, 'snotra.config.json'),
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      ...config,
    }),
  );
  return dir;
}

/** Polls an async check until it gives a value (not undefined/null/false) or the deadline passes. */
export async function until<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs: number,
  what: string,
): Promise<T> {
  // The same floor as every polling wait of the tests (see MIN_WAIT_MS).
  const start = Date.now();
  const end = start + Math.max(timeoutMs, MIN_WAIT_MS);
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v;
    const now = Date.now();
    if (now > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollDelayMs(now - start, 50)));
  }
}
