import { spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startSnotra, type StartedProcess } from '../support/snotra-process.ts';
import { eventually } from '../support/runtime.ts';
import type { FakeTelegram } from './fake-telegram.ts';
import { MIN_WAIT_MS, pollDelayMs } from '../support/min-wait.ts';

/** A bot token shaped like Telegram's, unique per test file. */
export function botToken(): string {
  return `${100000 + Math.floor(Math.random() * 899999)}:AAH-${Math.random().toString(36).slice(2)}_${Math.random().toString(36).slice(2)}`;
}

export interface PlatformWorkspace {
  readonly dir: string;
  readonly config: string;
  readonly stateDir: string;
  readonly env: NodeJS.ProcessEnv;
  start(): StartedProcess;
}

/** A temp folder with a project root, a scripted agent `bot` and one Telegram connection `tg`. */
export function platformWorkspace(
  fake: FakeTelegram,
  script: unknown[],
  platform: Record<string, unknown> = {},
): PlatformWorkspace {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-platform-')));
  mkdirSync(join(dir, 'project'));
  writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
  const config = join(dir, 'snotra.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: { bot: { mode: 'ask', model: { provider: 'scripted', script: 'script.json' } } },
      secrets: { backend: 'env' },
      sidecar: { enabled: false },
      surfaces: {
        platforms: [
          {
            id: 'tg',
            kind: 'telegram',
            agent: 'bot',
            token: { secret: 'tg-bot' },
            apiBase: fake.url,
            ...platform,
          },
        ],
      },
    }),
  );
  const env = { SNOTRA_SECRET_TG_BOT: fake.token };
  return {
    dir,
    config,
    stateDir: join(dir, 'state'),
    env,
    start: () => startSnotra(['start', '--config', config], env),
  };
}

/** Runs the real CLI (asynchronously: the fake server in this process must keep answering). */
export function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** JSON lines of a CLI's stdout. */
export function lines<T = Record<string, unknown>>(stdout: string): T[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

const CODE = /snotra platforms pair tg ([0-9A-Z]{4}-[0-9A-Z]{4})/;

/** Waits for the `n`-th message to a chat (1-based) and returns its text. */
export async function nthReply(fake: FakeTelegram, chatId: number, n: number, what: string): Promise<string> {
  return eventually(() => fake.to(chatId)[n - 1]?.text, 30_000, what);
}

/** The pairing code in an instructions message, or null. */
export function codeIn(text: string): string | null {
  return CODE.exec(text)?.[1] ?? null;
}

/** A chat asks, gets a code, and the local user pairs it with the CLI. */
export async function pairChat(fake: FakeTelegram, stateDir: string, chatId: number): Promise<void> {
  const before = fake.to(chatId).length;
  fake.push(chatId, 'hello bot');
  const text = await nthReply(fake, chatId, before + 1, 'pairing instructions');
  const code = codeIn(text);
  if (code === null) throw new Error(`no pairing code in ${JSON.stringify(text)}`);
  const r = await cli(['platforms', 'pair', 'tg', code, '--state-dir', stateDir, '--json']);
  if (r.code !== 0) throw new Error(`pair failed: ${r.stdout}${r.stderr}`);
}

/** Every file under `dir` whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** Polls an async `check` until it returns a value (not undefined/null/false) or the timeout passes. */
export async function eventuallyAsync<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const start = Date.now();
  const end = start + Math.max(timeoutMs, MIN_WAIT_MS);
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v;
    const now = Date.now();
    if (now > end) throw new Error(`timed out waiting for ${what}`);
    // A look here spawns a CLI (~0.3 CPU-s): at most about two a second after the first.
    await new Promise((r) => setTimeout(r, pollDelayMs(now - start, 100, 500)));
  }
}

/** The reply keys a runtime logged as delivered (recorded sent), from its JSON log lines on stderr. */
export function deliveredKeys(p: StartedProcess): string[] {
  const keys: string[] = [];
  for (const line of p.stderr().split('\n')) {
    if (!line.includes('platform: reply delivered')) continue;
    try {
      const key = (JSON.parse(line) as { key?: unknown }).key;
      if (typeof key === 'string') keys.push(key);
    } catch {
      // Not a JSON log line.
    }
  }
  return keys;
}
