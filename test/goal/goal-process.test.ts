import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, Redactor, type Store } from '../../store/index.ts';
import { assertLifecycles } from '../support/lifecycle.ts';
import { eventually } from '../support/runtime.ts';
import { BIN, startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';

const dirs: string[] = [];
const procs: StartedProcess[] = [];
afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await stopProcess(p);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A workspace whose goal `g` appends one line to project/log.txt per iteration (through `shell`). */
function workspace(
  mode: 'allow' | 'ask',
  maxIterations: number,
  command: string,
): { dir: string; config: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-goal-')));
  dirs.push(dir);
  mkdirSync(join(dir, 'project'));
  writeFileSync(
    join(dir, 'script.json'),
    JSON.stringify([
      { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'shell', args: { command } }] } },
      // No expectation: after a kill the call may come back `tool.interrupted` (never re-run).
      { respond: { kind: 'final', text: 'one more step done' } },
    ]),
  );
  const config = join(dir, 'snotra.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: { worker: { mode, model: { provider: 'scripted', script: 'script.json' } } },
      surfaces: {
        goalLoops: [{ id: 'g', agent: 'worker', objective: 'append a line per step', maxIterations }],
      },
    }),
  );
  return { dir, config };
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

function cli(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
    env: { ...process.env, TZ: 'UTC' },
  });
  // A process that did not exit on its own (a signal, a spawn error) says how, with its stderr.
  if (r.status === null)
    throw new Error(
      `snotra ${args.join(' ')}: no exit code (signal ${String(r.signal)}, error ${String(r.error)}); stderr: ${r.stderr}`,
    );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function lines(dir: string): number {
  const f = join(dir, 'project', 'log.txt');
  return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean).length : 0;
}

async function start(config: string): Promise<StartedProcess> {
  const p = startSnotra(['start', '--config', config]);
  procs.push(p);
  await p.ready(60_000);
  return p;
}

/**
 * The exactly-once law of a goal: iterations 1..n, each recorded once with the run id of its
 * identity and exactly one run; the file-append effect happened once per completed shell call
 * (an interrupted one is never re-run); the goal's usage is the sum of its iterations'; every
 * call's audit lifecycle is in contract order with no repeated step.
 */
function checkExactlyOnce(dir: string): { iterations: number; completedCalls: number } {
  return withStore(dir, (s) => {
    const goal = s.goals.get('g');
    expect(goal).not.toBeNull();
    const its = s.goals.iterations('g', goal?.epoch);
    expect(its.map((i) => i.iteration)).toEqual(its.map((_, k) => k + 1));
    expect(its.map((i) => i.runId)).toEqual(its.map((i) => `worker:goal:g:${i.epoch}:${i.iteration}`));
    const goalRuns = s.snapshots.list().filter((r) => r.surface === 'goal');
    expect(goalRuns.map((r) => r.runId).sort()).toEqual(its.map((i) => i.runId).sort());
    const events = s.audit.list({});
    const started = events.filter((e) => e.kind === 'started' && e.tool === 'shell');
    const completed = events.filter((e) => e.kind === 'completed' && e.tool === 'shell');
    expect(new Set(started.map((e) => `${e.runId}/${e.callId}`)).size).toBe(started.length);
    // Each completed call appended once. A call cut in flight (a cancel, a kill) may or may not
    // have appended before it was cut, but never twice and never again after the cut.
    const cut = started.filter(
      (e) => !completed.some((c) => c.runId === e.runId && c.callId === e.callId),
    ).length;
    expect(lines(dir)).toBeGreaterThanOrEqual(completed.length);
    expect(lines(dir)).toBeLessThanOrEqual(completed.length + cut);
    const ended = its.filter((i) => i.usage !== null);
    if (goal !== null && ended.length === its.length) {
      expect(goal.used.modelCalls).toBe(ended.reduce((n, i) => n + (i.usage?.modelCalls ?? 0), 0));
      expect(goal.used.toolCalls).toBe(ended.reduce((n, i) => n + (i.usage?.toolCalls ?? 0), 0));
    }
    for (const it of its) assertLifecycles(s, it.runId);
    return { iterations: its.length, completedCalls: completed.length };
  });
}

const goalOf = (dir: string) => withStore(dir, (s) => s.goals.get('g'));
const machineState = (dir: string) =>
  withStore(dir, (s) => (s.goals.snapshotOf('g')?.snapshot as { value?: unknown } | null)?.value);

describe('goal loop through snotra start and the CLI', () => {
  it('pause, resume and cancel from the CLI against a running runtime', { timeout: 180_000 }, async () => {
    const { dir, config } = workspace('allow', 50, 'sleep 0.2; echo step >> log.txt');
    const p = await start(config);
    const started = cli(['goal', 'start', 'g', '--config', config, '--json']);
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({
      goalId: 'g',
      action: 'start',
      applied: true,
      result: 'ok',
    });
    await eventually(() => (goalOf(dir)?.iteration ?? 0) >= 2, 60_000, 'two iterations');

    const paused = cli(['goal', 'pause', 'g', '--config', config, '--json']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ applied: true, result: 'ok' });
    expect(JSON.parse(cli(['goal', 'show', 'g', '--config', config, '--json']).stdout).status).toBe('paused');
    // The iteration in flight finishes; then the machine rests in `paused` and starts nothing.
    await eventually(() => machineState(dir) === 'paused', 30_000, 'the goal machine to rest paused');
    const atPause = goalOf(dir);
    expect(withStore(dir, (s) => s.goals.iterations('g').every((i) => i.status === 'ended'))).toBe(true);
    // A second pause changes nothing and says so.
    const again = cli(['goal', 'pause', 'g', '--config', config]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not_active');

    const resumed = cli(['goal', 'resume', 'g', '--config', config]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('resume applied');
    await eventually(
      () => (goalOf(dir)?.iteration ?? 0) > (atPause?.iteration ?? 0),
      30_000,
      'an iteration after resume',
    );

    const cancelled = cli(['goal', 'cancel', 'g', '--config', config]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    await eventually(() => goalOf(dir)?.status === 'cancelled', 30_000, 'cancelled');
    const list = cli(['goal', 'list', '--config', config]);
    expect(list.stdout).toMatch(/^g {2}cancelled \(cancelled_by_human\)/);
    await stopProcess(p);
    const law = checkExactlyOnce(dir);
    expect(law.iterations).toBeGreaterThan(atPause?.iteration ?? 0);
  });

  it(
    'SIGKILL during an iteration, restart at once: no iteration repeated or skipped, each effect once',
    { timeout: 240_000 },
    async () => {
      const { dir, config } = workspace('allow', 4, 'sleep 0.8; echo step >> log.txt');
      let p = await start(config);
      expect(cli(['goal', 'start', 'g', '--config', config]).code).toBe(0);
      // Kill as soon as iteration 2 is recorded (its run starting), then while iteration 3's
      // shell call runs (started, not completed: it is reported interrupted, never run again).
      await eventually(() => (goalOf(dir)?.iteration ?? 0) >= 2, 60_000, 'iteration 2');
      p.child.kill('SIGKILL');
      await p.exited;
      p = await start(config);
      await eventually(
        () =>
          withStore(dir, (s) => {
            const events = s.audit.list({ runId: 'worker:goal:g:1:3' });
            return (
              events.some((e) => e.kind === 'started' && e.tool === 'shell') &&
              !events.some((e) => e.kind === 'completed' && e.tool === 'shell')
            );
          }),
        60_000,
        "iteration 3's shell call in flight",
      );
      p.child.kill('SIGKILL');
      await p.exited;
      p = await start(config);
      await eventually(() => goalOf(dir)?.status === 'budget_limited', 90_000, 'the goal to reach its cap');
      expect(goalOf(dir)).toMatchObject({ stopReason: 'max_iterations', iteration: 4 });
      await stopProcess(p);
      const law = checkExactlyOnce(dir);
      expect(law.iterations).toBe(4);
      expect(law.completedCalls).toBeGreaterThanOrEqual(2);
      // The call cut by the kill was reported to the model as interrupted and not run again.
      const third = withStore(dir, (s) => s.audit.list({ runId: 'worker:goal:g:1:3' }).map((e) => e.kind));
      expect(third.filter((k) => k === 'started')).toHaveLength(1);
      expect(third).not.toContain('completed');
    },
  );

  it(
    'SIGKILL while parked, restart: still parked on the same approval; approved from the CLI, the goal continues',
    { timeout: 240_000 },
    async () => {
      const { dir, config } = workspace('ask', 2, 'echo step >> log.txt');
      let p = await start(config);
      expect(cli(['goal', 'start', 'g', '--config', config]).code).toBe(0);
      await eventually(() => goalOf(dir)?.parked === true, 60_000, 'the goal to park');
      const pending = withStore(dir, (s) => s.approvals.listPending({}));
      expect(pending).toHaveLength(1);
      p.child.kill('SIGKILL');
      await p.exited;
      p = await start(config);
      const show = JSON.parse(cli(['goal', 'show', 'g', '--config', config, '--json']).stdout);
      expect(show).toMatchObject({ status: 'active', parked: true, iteration: 1 });
      expect(withStore(dir, (s) => s.approvals.listPending({}).map((a) => a.id))).toEqual([pending[0]?.id]);
      expect(lines(dir)).toBe(0);

      expect(cli(['inbox', 'approve', pending[0]?.id as string, '--config', config]).code).toBe(0);
      const second = await eventually(
        () => withStore(dir, (s) => s.approvals.listPending({}).find((a) => a.id !== pending[0]?.id)),
        60_000,
        'the second iteration to park',
      );
      expect(second.runId).toBe('worker:goal:g:1:2');
      expect(lines(dir)).toBe(1);
      expect(cli(['inbox', 'approve', second.id, '--config', config]).code).toBe(0);
      await eventually(() => goalOf(dir)?.status === 'budget_limited', 60_000, 'the goal to reach its cap');
      await stopProcess(p);
      expect(checkExactlyOnce(dir)).toEqual({ iterations: 2, completedCalls: 2 });
    },
  );
});
