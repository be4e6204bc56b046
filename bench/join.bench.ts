// Joining a running runtime (issue 31): `snotra run --json` beside a running `snotra start`,
// spawn → its first feed line (run.started) and spawn → exit, against the same run with no
// `snotra start` (an embedded runtime boots in the CLI's process); and, inside one process, the
// join alone (connect, hello, follow) and submit → first feed event over the join socket.
// `npx tsx bench/join.bench.ts [runs]` prints JSON. Builds dist/ first when stale.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tryJoin } from '../surfaces/client/joined.ts';
import { summarize } from './stats.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'snotra.js');
const RUNS = Number(process.argv[2] ?? 15);
execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });

const work = mkdtempSync(join(tmpdir(), 'snotra-join-bench-'));
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
const env = { ...process.env, NO_COLOR: '1', SNOTRA_LOG_LEVEL: 'warn' };

/**
 * Spawns `snotra run --json` (under /usr/bin/time), returns ms to its first stdout line, to its
 * exit, and its CPU time (user + sys: much less sensitive to the shared machine's load).
 */
function cliRun(): Promise<{ first: number; exit: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    let first = NaN;
    let err = '';
    const child = spawn(
      '/usr/bin/time',
      ['-f', 'cpu %U %S', process.execPath, BIN, 'run', '--config', config, '--json', 'hi'],
      { env },
    );
    child.stdout.on('data', () => {
      if (Number.isNaN(first)) first = performance.now() - t;
    });
    child.stderr.on('data', (d) => (err += String(d)));
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`snotra run exited ${code}: ${err}`));
      else {
        const [, user, sys] = /cpu (\S+) (\S+)\s*$/.exec(err) ?? [];
        resolve({ first, exit: performance.now() - t, cpu: (Number(user) + Number(sys)) * 1000 });
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

const round = (s: ReturnType<typeof summarize>) => ({
  median: Math.round(s.median),
  min: Math.round(s.min),
  max: Math.round(s.max),
  n: s.n,
});

const load = [loadavg()[0]];
const embedded: Array<{ first: number; exit: number; cpu: number }> = [];
for (let i = 0; i < RUNS; i++) embedded.push(await cliRun());
const rt = await startRuntime();
const joined: Array<{ first: number; exit: number; cpu: number }> = [];
const joinOnly: number[] = [];
const submitToEvent: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) joined.push(await cliRun());
  for (let i = 0; i < RUNS; i++) {
    let firstEvent: (() => void) | null = null;
    const t0 = performance.now();
    const client = await tryJoin(join(work, 'state'), () => firstEvent?.());
    if (client === null) throw new Error('no runtime to join');
    joinOnly.push(performance.now() - t0);
    const seen = new Promise<void>((resolve) => (firstEvent = resolve));
    const t1 = performance.now();
    const runId = await client.submit({ agent: 'worker', text: 'hi', unattended: false });
    await seen;
    submitToEvent.push(performance.now() - t1);
    await client.waitForRun(runId);
    await client.close();
  }
} finally {
  await rt.stop();
  load.push(loadavg()[0]);
  rmSync(work, { recursive: true, force: true });
}
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      loadAverage: load.map((l) => Math.round((l ?? 0) * 10) / 10),
      cliJoinedSpawnToFirstEventMs: round(summarize(joined.map((s) => s.first))),
      cliJoinedSpawnToExitMs: round(summarize(joined.map((s) => s.exit))),
      cliJoinedCpuMs: round(summarize(joined.map((s) => s.cpu))),
      cliEmbeddedCpuMs: round(summarize(embedded.map((s) => s.cpu))),
      cliEmbeddedSpawnToFirstEventMs: round(summarize(embedded.map((s) => s.first))),
      cliEmbeddedSpawnToExitMs: round(summarize(embedded.map((s) => s.exit))),
      inProcessJoinMs: round(summarize(joinOnly)),
      inProcessSubmitToFirstEventMs: round(summarize(submitToEvent)),
    },
    null,
    2,
  ),
);
