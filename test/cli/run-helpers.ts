import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEachTest } from '../support/cleanup.ts';
import { eventually } from '../support/runtime.ts';

export const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;

/** A workspace with a config whose one agent replays `steps` (the scripted model). */
export interface RunWorkspace {
  readonly dir: string;
  readonly project: string;
  readonly config: string;
  readonly stateDir: string;
  cleanup(): void;
}

export function runWorkspace(
  steps: unknown[],
  agent: Record<string, unknown> = {},
  /** More agents, each replaying its own steps. */
  others: Record<string, unknown[]> = {},
): RunWorkspace {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-run-')));
  const project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(join(dir, 'steps.json'), JSON.stringify(steps));
  const more: Record<string, unknown> = {};
  for (const [id, script] of Object.entries(others)) {
    writeFileSync(join(dir, `${id}.json`), JSON.stringify(script));
    more[id] = { mode: 'ask', model: { provider: 'scripted', script: `${id}.json` } };
  }
  const config = join(dir, 'snotra.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: {
        worker: { mode: 'ask', model: { provider: 'scripted', script: 'steps.json' }, ...agent },
        ...more,
      },
    }),
  );
  return {
    dir,
    project,
    config,
    stateDir: join(dir, 'state'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs the CLI to completion in a child process. */
export function snotra(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
    ...(input !== undefined ? { input } : {}),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The kinds of a run's audit events, in order, read through `snotra audit --json`. */
export function auditKinds(stateDir: string, runId: string): string[] {
  const audit = snotra(['audit', '--state-dir', stateDir, '--run', runId, '--json']);
  return audit.stdout
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { kind: string }).kind);
}

/** A CLI child process whose output is collected as it comes. */
export interface LiveCli {
  readonly child: ChildProcess;
  out(): string;
  err(): string;
  /** The JSON lines written so far. */
  events(): Array<Record<string, unknown> & { type: string }>;
  exited: Promise<number | null>;
}

/** CLI children of the running test: one a failed test left running is killed after it. */
const running = new Set<ChildProcess>();
afterEachTest(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
});

export function startCli(command: string, args: string[], env: NodeJS.ProcessEnv = {}): LiveCli {
  const child = spawn(command, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, TZ: 'UTC', ...env },
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += String(d)));
  child.stderr?.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    out: () => out,
    err: () => err,
    events: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown> & { type: string }),
    exited,
  };
}

/** Waits for the first event of `type` (matching `where`) in a live `--json` run. */
export function eventOf(
  cli: LiveCli,
  type: string,
  where: (e: Record<string, unknown>) => boolean = () => true,
  timeoutMs = 60_000,
) {
  return eventually(
    () => cli.events().find((e) => e.type === type && where(e)),
    timeoutMs,
    `a ${type} event (stdout so far: ${cli.out().slice(-2000)} stderr: ${cli.err().slice(-2000)})`,
  );
}

/** Waits for the process to exit (bounded) and returns its code. */
export async function exitOf(cli: LiveCli, timeoutMs = 60_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the CLI did not exit in time; stdout: ${cli.out().slice(-2000)} stderr: ${cli.err().slice(-2000)}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([cli.exited, timeout]);
  } finally {
    clearTimeout(timer);
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  }
}

const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The arguments of util-linux `script` that run `argv` on a pseudo-terminal (stdin, stdout and
 * stderr through it; `script -e` exits with the command's status). The command is `exec`ed by the
 * shell `script` starts, always /bin/sh: a shell left between them (dash does not exec a `-c`
 * command by itself; bash does) is in the terminal's foreground group, so a Ctrl-C typed while the
 * terminal is in its normal mode reaches it too, and it ends by SIGINT once the command has
 * exited, whatever the command's status (script then says 130).
 */
export function ptyScriptArgs(argv: readonly string[], env: Record<string, string> = {}): string[] {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return ['-qefc', `exec ${['env', ...vars, ...argv].map(shQuote).join(' ')}`, '/dev/null'];
}

/** Runs `argv` on a pseudo-terminal (see `ptyScriptArgs`), its output collected as it comes. */
export function startOnPty(argv: readonly string[], env: Record<string, string> = {}): LiveCli {
  return startCli('script', ptyScriptArgs(argv, env), { SHELL: '/bin/sh' });
}
