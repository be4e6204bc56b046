import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { firingMessageId, parseSchedule, planMissed } from '../../runtime/schedule-plan.ts';
import { Scheduler, type ScheduledTask } from '../../runtime/scheduler.ts';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import { openStore, Redactor, type FiringRecord, type Store } from '../../store/index.ts';
import { eventually } from '../support/runtime.ts';
import { runs } from '../support/laws.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function store(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'snotra-sched-unit-'));
  const s = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
  cleanups.push(() => {
    s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return s;
}

function harness(
  s: Store,
  tasks: ScheduledTask[],
  clock: SimulatedClock,
  active: (f: FiringRecord) => boolean = () => false,
) {
  const started: string[] = [];
  const scheduler = new Scheduler(tasks, {
    journal: s.schedule,
    clock,
    start: async (task, messageId) => {
      started.push(`${task.id}:${messageId}`);
    },
    runActive: active,
    log: () => {},
  });
  cleanups.push(() => scheduler.stop());
  return { scheduler, started };
}

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

describe('schedule plan', () => {
  it('reads ISO one-shots and cron patterns; the next fire time is strictly after', () => {
    const once = parseSchedule('2026-12-01T10:00:05Z');
    expect(once.next(T0)).toBe(T0 + 5000);
    expect(once.next(T0 + 5000)).toBeNull();
    const every = parseSchedule('*/10 * * * * *');
    expect(every.next(T0)).toBe(T0 + 10_000);
    expect(every.between(T0, T0 + 30_000, 10)).toEqual([T0 + 30_000, T0 + 20_000, T0 + 10_000]);
    expect(() => parseSchedule('not a cron')).toThrow();
  });

  it('missed firings: skip records all; run-once runs only the newest within the window and records the rest', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { maxLength: 30 }),
        fc.constantFrom('skip' as const, 'run-once' as const),
        fc.integer({ min: 1, max: 20_000 }),
        (times, policy, window) => {
          const missed = [...times].sort((a, b) => b - a);
          const now = 10_000;
          const plan = planMissed(missed, policy, window, now);
          const accounted = [...plan.skipped.map((s) => s.fireAt), ...(plan.run === null ? [] : [plan.run])];
          expect(accounted.sort()).toEqual([...missed].sort());
          if (policy === 'skip') expect(plan.run).toBeNull();
          if (plan.run !== null) {
            expect(plan.run).toBe(missed[0]);
            expect(now - plan.run).toBeLessThanOrEqual(window);
          }
        },
      ),
      { numRuns: runs(100) },
    );
  });

  it('one firing has one message id, the same in every process', () => {
    expect(firingMessageId('t', T0)).toBe(firingMessageId('t', T0));
    expect(firingMessageId('t', T0)).not.toBe(firingMessageId('t', T0 + 1000));
    expect(firingMessageId('t', T0)).not.toBe(firingMessageId('u', T0));
  });
});

describe('Scheduler on a real journal', () => {
  it('a firing is recorded before its run starts, and recorded once whoever fires it again', async () => {
    const s = store();
    const clock = new SimulatedClock(T0);
    const task: ScheduledTask = {
      id: 'once',
      agent: 'a',
      cron: new Date(T0 + 50).toISOString(),
      message: 'm',
    };
    const h = harness(s, [task], clock);
    h.scheduler.start();
    clock.advance(60);
    await eventually(() => h.started.length === 1, 5_000, 'the firing');
    expect(s.schedule.list('once')).toMatchObject([
      { status: 'started', reason: 'on_time', fireAt: T0 + 50 },
    ]);
    h.scheduler.stop();
    // A new scheduler (a restart) finds the firing recorded, its run not yet created (no snapshot
    // here): it re-sends the same identity (the runtime makes one run of it), never a new firing.
    const again = harness(s, [task], clock);
    again.scheduler.start();
    expect(again.started).toEqual(h.started);
    expect(s.schedule.list('once')).toHaveLength(1);
  });

  it('a recorded firing whose run never appeared is started at boot with the same message id', () => {
    const s = store();
    const task: ScheduledTask = { id: 'cut', agent: 'a', cron: '0 0 * * *', message: 'm' };
    const messageId = firingMessageId('cut', T0);
    s.schedule.record([
      {
        taskId: 'cut',
        fireAt: T0,
        status: 'started',
        reason: 'on_time',
        runId: `a:${messageId}`,
        recordedAt: T0,
      },
    ]);
    const h = harness(s, [task], new SimulatedClock(T0 + 1000));
    h.scheduler.start();
    expect(h.started).toEqual([`cut:${messageId}`]);
  });

  it('firings missed while down are recorded as skipped, or one caught up with run-once', async () => {
    const s = store();
    const clock = new SimulatedClock(T0);
    const skip: ScheduledTask = { id: 'skip', agent: 'a', cron: '*/10 * * * * *', message: 'm' };
    const once: ScheduledTask = { ...skip, id: 'once', missed: 'run-once', catchUpWindowMs: 15_000 };
    const first = harness(s, [skip, once], clock); // first boot: the tasks become known at T0
    first.scheduler.start();
    first.scheduler.stop();
    clock.set(T0 + 35_000); // down for 35 s: firings at +10, +20, +30 missed
    const h = harness(s, [skip, once], clock);
    h.scheduler.start();
    expect(s.schedule.list('skip').map((f) => [f.fireAt - T0, f.status, f.reason])).toEqual([
      [30_000, 'skipped', 'missed_while_down'],
      [20_000, 'skipped', 'missed_while_down'],
      [10_000, 'skipped', 'missed_while_down'],
    ]);
    clock.advance(0); // the catch-up is started on a timer of its own
    await eventually(() => h.started.length === 1, 5_000, 'the catch-up');
    expect(h.started[0]).toBe(`once:${firingMessageId('once', T0 + 30_000)}`);
    expect(s.schedule.list('once').map((f) => [f.fireAt - T0, f.status, f.reason])).toEqual([
      [30_000, 'started', 'catch_up'],
      [20_000, 'skipped', 'coalesced_into_catch_up'],
      [10_000, 'skipped', 'coalesced_into_catch_up'],
    ]);
  });

  it('at most one run of a task at a time: a firing that finds the previous run going is recorded as skipped', async () => {
    const s = store();
    const clock = new SimulatedClock(T0);
    const task: ScheduledTask = { id: 'busy', agent: 'a', cron: '* * * * * *', message: 'm' };
    const h = harness(s, [task], clock, (f) => f.fireAt === T0 + 1000);
    h.scheduler.start();
    clock.advance(1000);
    await eventually(() => h.started.length === 1, 5_000, 'the first firing');
    clock.advance(1000);
    await eventually(() => s.schedule.list('busy').length === 2, 5_000, 'the second firing');
    expect(s.schedule.list('busy')[0]).toMatchObject({
      fireAt: T0 + 2000,
      status: 'skipped',
      reason: 'previous_run_active',
    });
    expect(h.started).toHaveLength(1);
  });

  it('a one-shot whose time passed before the task was first known is recorded as such, once', () => {
    const s = store();
    const task: ScheduledTask = {
      id: 'late',
      agent: 'a',
      cron: new Date(T0 - 5000).toISOString(),
      message: 'm',
    };
    harness(s, [task], new SimulatedClock(T0)).scheduler.start();
    harness(s, [task], new SimulatedClock(T0 + 10)).scheduler.start();
    expect(s.schedule.list('late')).toMatchObject([{ status: 'skipped', reason: 'past_when_scheduled' }]);
  });

  it('with run-once, a new one-shot whose time passed a moment before the start still runs once', async () => {
    const s = store();
    const task: ScheduledTask = {
      id: 'slow-start',
      agent: 'a',
      cron: new Date(T0 - 2000).toISOString(),
      message: 'm',
      missed: 'run-once',
      catchUpWindowMs: 60_000,
    };
    const clock = new SimulatedClock(T0);
    const h = harness(s, [task], clock);
    h.scheduler.start();
    clock.advance(0); // the catch-up is started on a timer of its own
    await eventually(() => h.started.length === 1, 5_000, 'the catch-up');
    expect(s.schedule.list('slow-start')).toMatchObject([{ status: 'started', reason: 'catch_up' }]);
  });

  it('a bad pattern is refused naming the task', () => {
    const s = store();
    expect(() =>
      harness(s, [{ id: 'bad', agent: 'a', cron: 'every day', message: 'm' }], new SimulatedClock(T0)),
    ).toThrow(/surfaces\.scheduled\[bad\]\.cron/);
  });
});
