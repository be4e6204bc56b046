import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, Redactor, type Store } from '../../store/index.ts';
import { eventually } from '../support/runtime.ts';
import { startSnotra, stopProcess } from '../support/snotra-process.ts';
import { assertLifecycles } from '../support/lifecycle.ts';

// Each firing's run makes one HTTP request to this server: a real, countable side effect.
const hits = new Map<string, number>();
let server: Server;
let port = 0;
const dirs: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-sched-')));
  dirs.push(dir);
  mkdirSync(join(dir, 'project'));
  return dir;
}

/** A scheduled task and the path its run's one HTTP request goes to. */
interface TaskSpec {
  readonly task: Record<string, unknown>;
  readonly path: string;
}

/** A config with one agent per task (`worker-N`, its own script), each task firing its agent. */
function writeConfig(dir: string, specs: readonly TaskSpec[]): string {
  const agents: Record<string, unknown> = {};
  for (const [i, { path }] of specs.entries()) {
    writeFileSync(
      join(dir, `script-${i}.json`),
      JSON.stringify([
        {
          respond: {
            kind: 'calls',
            calls: [
              {
                id: 'c1',
                tool: 'http_request',
                args: { url: `http://127.0.0.1:${port}${path}`, method: 'GET' },
              },
            ],
          },
        },
        { expect: { kind: 'tool.result', tool: 'http_request' }, respond: { kind: 'final', text: 'done' } },
      ]),
    );
    agents[`worker-${i}`] = {
      mode: 'allow',
      tools: ['http_request'],
      model: { provider: 'scripted', script: `script-${i}.json` },
    };
  }
  const file = join(dir, 'snotra.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents,
      http: { allowPrivateHosts: [`127.0.0.1:${port}`] },
      surfaces: {
        scheduled: specs.map(({ task }, i) => ({ agent: `worker-${i}`, message: 'ping', ...task })),
      },
    }),
  );
  return file;
}

function withStore<T>(dir: string, fn: (s: Store) => T): T {
  const store = openStore({
    path: join(dir, 'state', 'snotra.db'),
    redactor: new Redactor(),
    readonly: true,
  });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

const ENDED = new Set(['completed', 'failed', 'denied']);

/** Every started firing's run has ended (or is parked) and every firing up to `until` is recorded. */
function settled(dir: string, taskId: string): boolean {
  return withStore(dir, (s) => {
    const firings = s.schedule.list(taskId, 1000);
    if (firings.length === 0) return false;
    return firings.every(
      (f) =>
        f.status === 'skipped' || (f.runId !== null && ENDED.has(s.snapshots.get(f.runId)?.status ?? '')),
    );
  });
}

function describeTask(dir: string, taskId: string): string {
  return withStore(dir, (s) =>
    JSON.stringify(
      s.schedule
        .list(taskId, 20)
        .map((f) => ({ ...f, run: f.runId === null ? null : (s.snapshots.get(f.runId)?.status ?? 'none') })),
    ),
  );
}

async function sleepUntil(t: number): Promise<void> {
  while (Date.now() < t) await new Promise((r) => setTimeout(r, Math.min(5, Math.max(0, t - Date.now()))));
}

/** Checks the exactly-once law for one task: each firing ran at most once; a completed call's effect happened once. */
function checkTask(dir: string, taskId: string, path: string): { started: number; skipped: number } {
  return withStore(dir, (s) => {
    const firings = s.schedule.list(taskId, 10_000);
    const started = firings.filter((f) => f.status === 'started');
    const completedCalls = started.filter(
      (f) => s.ledger.lookup(`call:${f.runId}:c1`)?.status === 'completed',
    ).length;
    // Never twice: the server saw no more requests than calls that ran, and every completed call once.
    const seen = hits.get(path) ?? 0;
    expect(seen).toBeGreaterThanOrEqual(completedCalls);
    expect(seen).toBeLessThanOrEqual(started.length);
    for (const f of started) assertLifecycles(s, f.runId as string);
    return { started: started.length, skipped: firings.length - started.length };
  });
}

describe('scheduled tasks under SIGKILL at fire time', () => {
  it('a one-shot ISO task fires exactly once or is recorded as skipped, whatever the kill offset (-50…+200 ms), across restarts', async () => {
    const dir = workspace();
    const offsets = [-50, -20, 0, 10, 25, 50, 100, 150, 200];
    // One runtime holds a task per offset, each due `offset` ms before the one SIGKILL, so a single
    // kill lands at every offset of the range at once (one process pair, not one per offset).
    // A slow start on a loaded machine must not land after the first fire time: give it room, and
    // take later times when it did (that attempt's tasks are then left out of the config).
    let killAt = 0;
    let taskIds: string[] = [];
    let paths: string[] = [];
    let first;
    for (let attempt = 0; ; attempt++) {
      killAt = Date.now() + 4000 + attempt * 4000;
      taskIds = offsets.map((_, i) => `once-${i}-${attempt}`);
      paths = offsets.map((_, i) => `/once/${i}-${attempt}`);
      const config = writeConfig(
        dir,
        offsets.map((offset, i) => ({
          task: { id: taskIds[i], cron: new Date(killAt - offset).toISOString() },
          path: paths[i] as string,
        })),
      );
      first = startSnotra(['start', '--config', config]);
      await first.ready();
      if (Date.now() < killAt - Math.max(...offsets) - 200 || attempt === 3) break;
      expect(await stopProcess(first)).toBe(0);
    }
    const config = join(dir, 'snotra.config.json');
    await sleepUntil(killAt);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = startSnotra(['start', '--config', config]);
    await second.ready();
    for (const id of taskIds)
      await eventually(() => settled(dir, id), 20_000, `firing of ${id} recorded and its run ended`).catch(
        (err: Error) => {
          throw new Error(`${err.message}: ${describeTask(dir, id)}\n${second.stderr()}`);
        },
      );
    expect(await stopProcess(second)).toBe(0);
    let started = 0;
    for (const [i, offset] of offsets.entries()) {
      const id = taskIds[i] as string;
      const r = checkTask(dir, id, paths[i] as string);
      expect(r.started + r.skipped, `${id} at offset ${offset}`).toBe(1);
      started += r.started;
    }
    // One more boot: no one-shot fires again.
    const before = [...hits.entries()].filter(([k]) => k.startsWith('/once/')).reduce((a, [, n]) => a + n, 0);
    const last = startSnotra(['start', '--config', join(dir, 'snotra.config.json')]);
    await last.ready();
    expect(await stopProcess(last)).toBe(0);
    const after = [...hits.entries()].filter(([k]) => k.startsWith('/once/')).reduce((a, [, n]) => a + n, 0);
    expect(after).toBe(before);
    // The journal is visible from the CLI.
    const tasks = startSnotra(['tasks', '--config', join(dir, 'snotra.config.json'), '--json']);
    expect(await tasks.exited).toBe(0);
    const lines = tasks
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { taskId: string; status: string });
    expect(lines.filter((l) => taskIds.includes(l.taskId))).toHaveLength(offsets.length);
    // This attempt's tasks only: a start too slow for an earlier attempt's fire times may have fired some of those.
    expect(lines.filter((l) => taskIds.includes(l.taskId) && l.status === 'started')).toHaveLength(started);
  }, 240_000);

  it('a recurring task killed around its fire times, restarted at once, never runs a firing twice; run-once catches up one firing', async () => {
    const dir = workspace();
    const path = '/every2s';
    const config = writeConfig(dir, [
      { task: { id: 'every', cron: '*/2 * * * * *', missed: 'run-once', catchUpWindowMs: 60_000 }, path },
    ]);
    for (const offset of [-40, 0, 15, 60, 120, 190]) {
      const p = startSnotra(['start', '--config', config]);
      await p.ready();
      const next = Math.ceil((Date.now() + 500) / 2000) * 2000;
      await sleepUntil(next + offset);
      p.child.kill('SIGKILL');
      await p.exited;
    }
    const p = startSnotra(['start', '--config', config]);
    await p.ready();
    await eventually(() => settled(dir, 'every'), 20_000, 'every firing recorded and its run ended');
    expect(await stopProcess(p)).toBe(0);
    const r = checkTask(dir, 'every', path);
    expect(r.started).toBeGreaterThan(0);
    const reasons = withStore(dir, (s) => s.schedule.list('every', 1000).map((f) => f.reason));
    // Boots after a kill found firings missed while down: one caught up, the rest recorded.
    expect(reasons).toContain('catch_up');
  }, 240_000);
});
