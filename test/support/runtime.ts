import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { ModelProvider } from '../../actors/model/provider.ts';
import type { ToolExecutor } from '../../actors/tools/types.ts';
import { parseConfig, type LoadedConfig } from '../../runtime/config/load.ts';
import { Runtime, type RuntimeOptions } from '../../runtime/runtime.ts';
import { MIN_WAIT_MS, pollDelayMs } from './min-wait.ts';

/** A temporary workspace and state dir for a runtime test. */
export interface RuntimeFixture {
  readonly dir: string;
  readonly project: string;
  readonly stateDir: string;
  readonly loaded: LoadedConfig;
  /** Every line the `send_message` executor sent, read from its outbox file. */
  sent(): string[];
  readonly executors: Record<string, ToolExecutor>;
  /** Log lines written by the runtime (redacted JSON). */
  readonly logs: string[];
  start(model: ModelProvider, extra?: Partial<RuntimeOptions>): Promise<Runtime>;
  cleanup(): void;
}

/**
 * A runtime fixture whose `send_message` appends to a real outbox file (a real, countable side
 * effect), with the config given merged over a workspace of one read-write root. `folders`
 * (relative to the fixture's folder) are created before the config is loaded.
 */
export function runtimeFixture(
  config: Record<string, unknown>,
  folders: readonly string[] = [],
): RuntimeFixture {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-rt-')));
  const project = join(dir, 'project');
  mkdirSync(project);
  // Roots must exist when the config is loaded.
  for (const f of folders) mkdirSync(join(dir, f), { recursive: true });
  const stateDir = join(dir, 'state');
  const outbox = join(dir, 'outbox.txt');
  const loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      ...config,
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );
  const logs: string[] = [];
  const executors: Record<string, ToolExecutor> = {
    send_message: {
      async execute(args) {
        appendFileSync(outbox, `${String(args.channel)} ${String(args.text)}\n`);
        return { delivered: true };
      },
    },
  };
  return {
    dir,
    project,
    stateDir,
    loaded,
    executors,
    logs,
    sent: () =>
      existsSync(outbox) ? readFileSync(outbox, 'utf8').trimEnd().split('\n').filter(Boolean) : [],
    start: (model, extra = {}) =>
      Runtime.start({
        loaded,
        model,
        executorOverrides: executors,
        logDestination: new Writable({
          write(chunk, _enc, cb) {
            logs.push(String(chunk));
            cb();
          },
        }),
        syncIntervalMs: 100,
        ...extra,
      }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Polls `check` until it returns a value (not undefined/null/false) or the timeout passes. */
export async function eventually<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const start = Date.now();
  const end = start + Math.max(timeoutMs, MIN_WAIT_MS);
  for (;;) {
    // Awaited: an async check returns a Promise, which is truthy, so without the await the first
    // poll "passed" whatever it resolved to (the cluster test read a record before it was written).
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v;
    const now = Date.now();
    if (now > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollDelayMs(now - start)));
  }
}
