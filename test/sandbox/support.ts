/**
 * Support for sandbox tests: a workspace with a fake home holding credentials, a git repository
 * in the read-write root, a read-only root, a folder outside every root and the runtime's state
 * dir inside the writable root (the hardest place to protect); the runtime in a child process
 * whose HOME is the fake home; and process lookups in /proc.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
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
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isLiveState, listProcesses } from '../../runtime/processes/index.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const CHILD = new URL('./fixtures/runtime-child.ts', import.meta.url).pathname;
const REPO = new URL('../..', import.meta.url).pathname;
/** Where sandbox workspaces are made: /var/tmp (persistent temp, not replaced inside the sandbox). */
export const WORK_BASE = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();

/** The paths of one sandbox workspace (all canonical). */
export interface SandboxWorkspace {
  readonly dir: string;
  readonly home: string;
  readonly project: string;
  readonly docs: string;
  readonly outside: string;
  readonly state: string;
  readonly config: string;
}

/**
 * Creates the workspace. `tools` is the agent's tool set (no `external` tool: no network).
 * The state dir is `project/.state`, inside the writable root.
 */
export function sandboxWorkspace(tools: readonly string[]): SandboxWorkspace {
  // Not under /tmp: the sandbox gives every command a private /tmp, which would hide the fake home
  // by itself and make the test prove less than it should.
  const dir = realpathSync(mkdtempSync(join(WORK_BASE, 'snotra-sbx-')));
  const home = join(dir, 'home');
  const project = join(dir, 'project');
  const docs = join(dir, 'docs');
  const outside = join(dir, 'outside');
  const state = join(project, '.state');
  const config = join(dir, 'snotra.config.json');
  for (const d of [join(home, '.ssh'), join(home, '.aws'), join(project, 'work'), docs, outside, state]) {
    mkdirSync(d, { recursive: true });
  }
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'FAKE-PRIVATE-KEY-for-the-sandbox-test\n', { mode: 0o600 });
  writeFileSync(join(home, '.aws', 'credentials'), '[default]\naws_secret_access_key = FAKE-AWS\n');
  writeFileSync(join(home, '.bashrc'), '# fake bashrc\n');
  writeFileSync(join(project, 'work', 'in.txt'), 'hello from the root\n');
  writeFileSync(join(project, '.mcp.json'), '{"servers":{}}\n');
  writeFileSync(join(docs, 'readme.txt'), 'docs are readable\n');
  execFileSync('git', ['init', '-q', project], { env: { PATH: process.env.PATH, HOME: home } });
  writeFileSync(
    config,
    JSON.stringify({
      stateDir: 'project/.state',
      workspace: {
        roots: [
          { id: 'project', path: 'project', access: 'read-write', primary: true },
          { id: 'docs', path: 'docs', access: 'read' },
        ],
      },
      agents: { worker: { mode: 'allow', tools } },
    }),
  );
  return { dir, home, project, docs, outside, state, config };
}

/** A fingerprint of every file under `dir` (paths, sizes and contents), to show nothing changed. */
export function fingerprint(dir: string, skip: (path: string) => boolean = () => false): string {
  const hash = createHash('sha256');
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (skip(path)) continue;
      const st = statSync(path);
      hash.update(`${path}\0${st.isDirectory() ? 'd' : st.size}\0`);
      if (st.isDirectory()) walk(path);
      else hash.update(readFileSync(path));
    }
  };
  walk(dir);
  return hash.digest('hex');
}

/** The runtime child: its JSON lines as they arrive, and its exit. */
export interface RuntimeChild {
  readonly process: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** Resolves with the first line whose `event` is `event`. */
  line(event: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  readonly stderr: () => string;
}

/** Starts the runtime child on `ws` with scripted `steps` for agent `worker`, HOME = the fake home. */
export function startRuntimeChild(ws: SandboxWorkspace, steps: unknown[]): RuntimeChild {
  writeFileSync(join(ws.dir, 'script.json'), JSON.stringify(steps));
  const child = spawn(process.execPath, [...childNodeArgs(CHILD), ws.dir], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOME: ws.home, TZ: 'UTC' },
  });
  let err = '';
  child.stderr?.on('data', (d) => (err += String(d)));
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    try {
      lines.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      return;
    }
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
      for (const w of waiters.splice(0)) w();
    }),
  );
  let done = false;
  void exited.then(() => (done = true));
  return {
    process: child,
    exited,
    stderr: () => err,
    async line(event, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find((l) => l.event === event);
        if (found) return found;
        if (done || Date.now() > end) {
          throw new Error(
            `runtime child: no "${event}" line (lines: ${JSON.stringify(lines)}, stderr: ${err})`,
          );
        }
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
  };
}

/** Live processes whose command line is exactly `argv` (e.g. `sleep 1001.12345`). */
export async function processesRunning(argv: readonly string[]): Promise<number[]> {
  const wanted = `${argv.join('\0')}\0`;
  const out: number[] = [];
  for (const p of await listProcesses()) {
    if (!isLiveState(p.state)) continue;
    try {
      if (readFileSync(`/proc/${p.pid}/cmdline`, 'utf8') === wanted) out.push(p.pid);
    } catch {
      // Gone while looking.
    }
  }
  return out;
}

/** Polls until `check` holds or `ms` pass; returns whether it held. */
export async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sleep durations unique to this test process (so parallel tests never see each other's). */
export function uniqueSleeps(n: number): string[] {
  const base = Math.floor(Math.random() * 90_000) + 10_000;
  return Array.from({ length: n }, (_, i) => `${1001 + i}.${base}${process.pid}`);
}

/**
 * Shell text that leaves the three `setsid` daemons of issue 11 behind (`setsid cmd &`,
 * `setsid -f cmd`, `nohup setsid cmd &`), each writing a marker in `dir` once it runs, and waits
 * (bounded) until all three markers exist.
 */
export function daemonsScript(dir: string, sleeps: readonly string[]): string {
  const [a, b, c] = sleeps;
  return [
    `setsid sh -c 'echo > "${dir}/daemon-1.started"; exec sleep ${a}' > /dev/null 2>&1 < /dev/null &`,
    `setsid -f sh -c 'echo > "${dir}/daemon-2.started"; exec sleep ${b}' > /dev/null 2>&1 < /dev/null`,
    `nohup setsid sh -c 'echo > "${dir}/daemon-3.started"; exec sleep ${c}' > /dev/null 2>&1 < /dev/null &`,
    `i=0; while [ $i -lt 200 ] && ! { [ -e "${dir}/daemon-1.started" ] && [ -e "${dir}/daemon-2.started" ] && [ -e "${dir}/daemon-3.started" ]; }; do sleep 0.05; i=$((i+1)); done`,
  ].join('\n');
}
