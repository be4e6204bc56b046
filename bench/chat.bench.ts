// The chat's join time (issue 32): `snotra chat` on a pseudo-terminal beside a running
// `snotra start`, spawn → its prompt ready (the `›` after the banner), and its CPU time; the same
// chat with no `snotra start` (it boots an embedded runtime: nats-server, store, actors) first,
// for comparison. Each sample then types `/exit` and waits for the chat to end. With
// CHAT_BENCH_BASELINE=DIR (a copy of another commit with its dist/ built) that commit's joined chat
// is timed too, its samples alternating with this one's against the same `snotra start`.
// `npx tsx bench/chat.bench.ts [runs]` prints JSON. Builds dist/ first when stale.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize } from './stats.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'snotra.js');
const RUNS = Number(process.argv[2] ?? 10);
execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });

const work = mkdtempSync(join(tmpdir(), 'snotra-chat-bench-'));
mkdirSync(join(work, 'project'));
writeFileSync(join(work, 'steps.json'), JSON.stringify([{ respond: { kind: 'final', text: 'ok' } }]));
const config = join(work, 'snotra.config.json');
writeFileSync(
  config,
  JSON.stringify({
    stateDir: 'state',
    workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
    agents: { worker: { mode: 'ask', model: { provider: 'scripted', script: 'steps.json' } } },
  }),
);
const env = {
  ...process.env,
  NO_COLOR: '1',
  SNOTRA_LOG_LEVEL: 'warn',
  XDG_STATE_HOME: join(work, 'state-home'),
  SHELL: '/bin/sh',
};

interface Sample {
  readonly ready: number;
  readonly exit: number;
  readonly cpu: number;
}

/**
 * One `snotra chat` on a pseudo-terminal (util-linux `script`, the chat under /usr/bin/time):
 * ms from spawn to its prompt, to its exit after `/exit`, and its CPU time (user + sys).
 */
function chatOnce(joined: boolean, bin = BIN): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    let ready = NaN;
    let out = '';
    const command = `exec /usr/bin/time -f 'cpu %U %S' ${process.execPath} ${bin} chat --config ${config}`;
    const child = spawn('script', ['-qefc', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const banner = joined ? 'Joined the running runtime' : 'snotra chat with worker';
    child.stdout.on('data', (d) => {
      out += String(d);
      const at = out.indexOf(banner);
      if (Number.isNaN(ready) && at !== -1 && out.indexOf('›', at) !== -1) {
        ready = performance.now() - t;
        child.stdin.write('/exit\r');
      }
    });
    child.stderr.on('data', (d) => (out += String(d)));
    child.once('exit', (code) => {
      if (code !== 0 || Number.isNaN(ready)) reject(new Error(`snotra chat exited ${code}: ${out}`));
      else {
        const [, user, sys] = /cpu (\S+) (\S+)\s*$/.exec(out) ?? [];
        resolve({ ready, exit: performance.now() - t, cpu: (Number(user) + Number(sys)) * 1000 });
      }
    });
  });
}

async function startRuntime(): Promise<{ stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'start', '--config', config], { env });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
      if (out.includes('"event":"ready"')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`snotra start exited ${code}`)));
  });
  return {
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit');
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const round = (values: number[]) => {
  const s = summarize(values);
  return { median: Math.round(s.median), min: Math.round(s.min), max: Math.round(s.max), n: s.n };
};

const BASELINE = process.env.CHAT_BENCH_BASELINE;
const load = [loadavg()[0]];
const embedded: Sample[] = [];
const joined: Sample[] = [];
const baseline: Sample[] = [];
try {
  for (let i = 0; i < RUNS; i++) embedded.push(await chatOnce(false));
  load.push(loadavg()[0]);
  const rt = await startRuntime();
  try {
    for (let i = 0; i < RUNS; i++) {
      joined.push(await chatOnce(true));
      if (BASELINE !== undefined) baseline.push(await chatOnce(true, join(BASELINE, 'bin', 'snotra.js')));
    }
  } finally {
    await rt.stop();
  }
} finally {
  load.push(loadavg()[0]);
  rmSync(work, { recursive: true, force: true });
}
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      loadAverage: load.map((l) => Math.round((l ?? 0) * 10) / 10),
      joinedSpawnToPromptMs: round(joined.map((s) => s.ready)),
      joinedSpawnToExitMs: round(joined.map((s) => s.exit)),
      joinedCpuMs: round(joined.map((s) => s.cpu)),
      embeddedSpawnToPromptMs: round(embedded.map((s) => s.ready)),
      embeddedSpawnToExitMs: round(embedded.map((s) => s.exit)),
      embeddedCpuMs: round(embedded.map((s) => s.cpu)),
      ...(BASELINE === undefined
        ? {}
        : {
            baselineJoinedSpawnToPromptMs: round(baseline.map((s) => s.ready)),
            baselineJoinedCpuMs: round(baseline.map((s) => s.cpu)),
          }),
    },
    null,
    2,
  ),
);
