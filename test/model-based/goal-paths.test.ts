// Model-based restart tests of the goal machine over its paths (`@xstate/graph`), generated from
// the machine with the events its effects and the world produce: the iteration's message
// acknowledged or refused (the done and error of `beginIteration`), its run parked and resumed,
// its end (a final answer, one with a completion claim, a failure, a run cut by its budget),
// and a human's pause, resume and cancel in every state. Each path is played through the real
// GoalHost and SQLite store, and restored in a new host after every one of its acts (after an
// odd one, the run's next act happens while no host runs: the new one must find it). Every
// shortest path (one to each state the machine can be in) is played, and a sample of the simple
// paths, picked with the seed the test's name prints. A new state or transition reachable with
// these events is covered without editing this test; every resting state must be reached.
import { getShortestPaths, getSimplePaths } from '@xstate/graph';
import type { EventObject } from 'xstate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goalMachine, iterationRunId, remainingOf } from '../../machines/goal/machine.ts';
import type { GoalContext, GoalEvent, GoalInput, GoalLimits } from '../../machines/goal/types.ts';
import { effectEvents, pathEvents, sample, stateIds, unreached } from './graph.ts';
import {
  GoalRestartHarness,
  RUN_WALL_MS,
  type GoalPath,
  type GoalRunResult,
  type WorldAct,
} from './goal-harness.ts';

const SEED = 20261201;
/** Simple paths sampled per input (all of them are thousands). */
const SAMPLED = 10;
/** The goals the paths are generated for: the iteration cap, a model-call budget, both budgets. */
const INPUTS: readonly { maxIterations: number; budget: GoalLimits; simple: boolean }[] = [
  { maxIterations: 2, budget: {}, simple: true },
  { maxIterations: 3, budget: { modelCalls: 2 }, simple: true },
  { maxIterations: 3, budget: { modelCalls: 3, toolCalls: 3 }, simple: false },
];

const { done, error } = effectEvents(goalMachine);
type Snap = { status: string; context: GoalContext; matches: (v: unknown) => boolean };

/** The events the world can produce in a state. */
function eventsIn(s: Snap): EventObject[] {
  if (s.status !== 'active') return [];
  const c = s.context;
  const out: EventObject[] = [{ type: 'CANCEL' }, { type: 'PAUSE' }, { type: 'RESUME' }];
  if (s.matches({ active: 'starting' }))
    out.push(
      done('beginIteration', { runId: iterationRunId(c.agentId, c.goalId, c.epoch, c.iteration + 1) }),
      error('beginIteration'),
    );
  const runId = c.runId as string;
  const left = remainingOf(c.budget, c.used);
  // A run spends at most what its iteration was given (the goal's remainder, the agent's 5).
  const one = { modelCalls: Math.min(1, left.modelCalls ?? 1), toolCalls: Math.min(1, left.toolCalls ?? 1) };
  const all = { modelCalls: left.modelCalls ?? 5, toolCalls: left.toolCalls ?? 5 };
  const ended = (status: 'completed' | 'failed', reason: string, used: typeof one, claim: string | null) =>
    ({
      type: 'RUN_ENDED',
      runId,
      outcome: { status, reason },
      usage: { ...used, wallTimeMs: RUN_WALL_MS },
      claim,
    }) satisfies GoalEvent as EventObject;
  if (s.matches({ active: 'running' })) out.push({ type: 'RUN_PARKED', runId } as EventObject);
  if (s.matches({ active: 'parked' })) out.push({ type: 'RUN_RESUMED', runId } as EventObject);
  if (s.matches({ active: 'running' }) || s.matches({ active: 'parked' }))
    out.push(
      ended('completed', 'final_answer', one, null),
      ended('completed', 'final_answer', one, 'the tests pass'),
      ended('failed', 'model_error', one, null),
      ended('failed', 'budget_model_calls', all, null),
    );
  return out;
}

/** The world's acts of a path; `early`: a run that ends right after its start ends before the ack. */
function toGoalPath(
  name: string,
  input: GoalInput,
  path: {
    steps: readonly { event: unknown; state: { value: unknown } }[];
    state: { value: unknown; context: unknown };
  },
  early: boolean,
): GoalPath {
  const events = pathEvents(path);
  const values = path.steps
    .filter((s) => (s.event as EventObject).type !== 'xstate.init')
    .map((s) => s.state.value);
  const initial = path.steps[0]?.state.value;
  const acts: { act: WorldAct; value: unknown }[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as EventObject & Partial<Extract<GoalEvent, { type: 'RUN_ENDED' }>>;
    const next = events[i + 1] as typeof e | undefined;
    if (early && e.type.startsWith('xstate.done.actor.') && next?.type === 'RUN_ENDED') {
      // The run ends first (the goal still starting), then the bus acknowledges its message.
      acts.push({ act: endAct(next, true), value: i === 0 ? initial : values[i - 1] });
      acts.push({ act: { kind: 'ack' }, value: values[i + 1] });
      i++;
      continue;
    }
    acts.push({ act: actOf(e), value: values[i] });
  }
  return {
    name,
    maxIterations: input.maxIterations,
    budget: input.budget,
    acts,
    initial,
    final: { value: path.state.value, context: path.state.context as GoalContext },
  };
}

function endAct(e: Partial<Extract<GoalEvent, { type: 'RUN_ENDED' }>>, early: boolean): WorldAct {
  const { outcome, usage, claim } = e as Extract<GoalEvent, { type: 'RUN_ENDED' }>;
  return {
    kind: 'end',
    outcome,
    usage: { modelCalls: usage.modelCalls, toolCalls: usage.toolCalls },
    claim,
    early,
  };
}

function actOf(e: EventObject): WorldAct {
  if (e.type.startsWith('xstate.done.actor.')) return { kind: 'ack' };
  if (e.type.startsWith('xstate.error.actor.')) return { kind: 'refuse' };
  switch (e.type) {
    case 'RUN_PARKED':
      return { kind: 'park' };
    case 'RUN_RESUMED':
      return { kind: 'unpark' };
    case 'RUN_ENDED':
      return endAct(e as Extract<GoalEvent, { type: 'RUN_ENDED' }>, false);
    case 'PAUSE':
    case 'RESUME':
    case 'CANCEL':
      return { kind: 'control', action: e.type.toLowerCase() as 'pause' };
  }
  throw new Error(`goal paths: no world act makes the event ${e.type}`);
}

const label = (events: readonly EventObject[]) =>
  events.map((e) => e.type.replace(/^xstate\.(done|error)\.actor\..*$/, '$1')).join('→') || 'start';

/** Every shortest path of each input, and a seeded sample of its simple paths. */
function goalPaths(seed: number): GoalPath[] {
  const out: GoalPath[] = [];
  for (const [n, limits] of INPUTS.entries()) {
    const input: GoalInput = {
      goalId: 'g',
      epoch: 1,
      agentId: 'worker',
      maxIterations: limits.maxIterations,
      budget: limits.budget,
    };
    const name = `max ${limits.maxIterations} ${JSON.stringify(limits.budget)}`;
    const opts = { input, events: eventsIn as never };
    const shortest = getShortestPaths(goalMachine, opts);
    const simple = limits.simple ? sample(getSimplePaths(goalMachine, opts), SAMPLED, seed + n) : [];
    for (const [k, p] of [...shortest, ...simple].entries())
      out.push(toGoalPath(`${name}: ${label(pathEvents(p))}`, input, p as never, k % 2 === 1));
  }
  return out;
}

/** The goal invariants of one play, and that it finished the path as the machine says. */
function check(path: GoalPath, r: GoalRunResult, where: string): void {
  const { goal, iterations } = r;
  // The machine ends where the path ends, with the path's context (nothing repeated, skipped or billed twice).
  expect(r.value, `${where}: final state`).toEqual(path.final.value);
  // The path's goal is `g`; each play has a goal of its own (its id is in its run ids too).
  const context = JSON.parse(
    JSON.stringify(r.context)
      .replaceAll(`"${goal.goalId}"`, '"g"')
      .replaceAll(`:goal:${goal.goalId}:`, ':goal:g:'),
  ) as unknown;
  expect(context, `${where}: final context`).toEqual(path.final.context);
  // No iteration skipped, none repeated: 1..n, each with the run id of its identity, run at most once.
  expect(
    iterations.map((i) => i.iteration),
    where,
  ).toEqual(iterations.map((_, k) => k + 1));
  expect(
    iterations.map((i) => i.runId),
    where,
  ).toEqual(iterations.map((i) => iterationRunId('worker', goal.goalId, goal.epoch, i.iteration)));
  for (const [runId, n] of r.creations) {
    expect(n, `${where}: ${runId} created`).toBe(1);
    expect(
      iterations.map((i) => i.runId),
      `${where}: ${runId} is an iteration`,
    ).toContain(runId);
  }
  expect(goal.iteration, where).toBeLessThanOrEqual(path.maxIterations);
  // Budgets never exceeded; the goal is billed what its iterations spent, each once.
  if (path.budget.modelCalls !== undefined)
    expect(goal.used.modelCalls, where).toBeLessThanOrEqual(path.budget.modelCalls);
  if (path.budget.toolCalls !== undefined)
    expect(goal.used.toolCalls, where).toBeLessThanOrEqual(path.budget.toolCalls);
  const billed = iterations.reduce(
    (t, i) => ({ m: t.m + (i.usage?.modelCalls ?? 0), c: t.c + (i.usage?.toolCalls ?? 0) }),
    { m: 0, c: 0 },
  );
  expect({ m: goal.used.modelCalls, c: goal.used.toolCalls }, `${where}: billed once`).toEqual(billed);
  expect({ m: goal.used.modelCalls, c: goal.used.toolCalls }, `${where}: billed as the path`).toEqual({
    m: path.final.context.used.modelCalls,
    c: path.final.context.used.toolCalls,
  });
  // An approval is decided by the human only: the goal waits, it never decides one.
  for (const a of r.approvals)
    expect(a.status, `${where}: approval ${a.id}`).toBe(r.decided.has(a.id) ? 'approved' : 'pending');
  // Started again, the ended epoch's runs reporting again bill the new epoch nothing.
  if (r.nextEpoch !== null) {
    expect(r.nextEpoch.epoch, `${where}: next epoch`).toBe(goal.epoch + 1);
    expect(r.nextEpoch.used, `${where}: a stale epoch bills nothing`).toEqual({
      modelCalls: 0,
      toolCalls: 0,
      wallTimeMs: 0,
      tokens: 0,
      costUsd: 0,
    });
  }
}

async function suite(h: GoalRestartHarness, paths: readonly GoalPath[]) {
  const reached = new Set<string>();
  let restores = 0;
  for (const path of paths) {
    const base = await h.run(path, null);
    check(path, base, `${path.name} (no crash)`);
    for (const v of [path.initial, ...path.acts.map((a) => a.value)])
      for (const id of stateIds(v, 'goal')) reached.add(id);
    for (let k = 0; k <= path.acts.length; k++) {
      const r = await h.run(path, k);
      check(path, r, `${path.name} (crash after ${k})`);
      expect(
        {
          status: r.goal.status,
          stopReason: r.goal.stopReason,
          iteration: r.goal.iteration,
          used: r.goal.used,
        },
        `${path.name} (crash after ${k}): ends as without a crash`,
      ).toEqual({
        status: base.goal.status,
        stopReason: base.goal.stopReason,
        iteration: base.goal.iteration,
        used: base.goal.used,
      });
      restores++;
    }
  }
  return { reached, restores };
}

describe('model-based restart tests of the goal machine over its generated paths', () => {
  let h: GoalRestartHarness;
  beforeAll(() => {
    h = new GoalRestartHarness();
  });
  afterAll(() => h.close());

  it(`every shortest path and ${SAMPLED} sampled simple paths per goal (seed ${SEED}), restored in a new host after every act: no iteration repeated or skipped, a stale run bills nothing, budgets hold, a parked goal waits for the human, and each ends as its path`, async () => {
    const paths = goalPaths(SEED);
    const { reached, restores } = await suite(h, paths);
    // Every resting state of the machine is on some path: a new one reachable with these events is too.
    expect(unreached(goalMachine, reached, 8), 'resting states no path reaches').toEqual([]);
    // The early end, the refused message and the park are played (the world's acts all occur).
    const acts = paths.flatMap((p) => p.acts.map((a) => a.act));
    expect(acts.some((a) => a.kind === 'end' && a.early)).toBe(true);
    expect(new Set(acts.map((a) => a.kind))).toEqual(
      new Set(['ack', 'refuse', 'park', 'unpark', 'end', 'control']),
    );
    // The figures in the README (175 paths, 886 restore points): at least this much.
    expect(paths.length).toBeGreaterThanOrEqual(170);
    expect(restores).toBeGreaterThanOrEqual(850);
  }, 600_000);
});

describe('the goal suite finds a broken machine', () => {
  it('a machine that accepts any run end (bills a stale iteration again) is caught', async () => {
    const mutant = new GoalRestartHarness(goalMachine.provide({ guards: { isCurrentRun: () => true } }));
    try {
      await expect(suite(mutant, goalPaths(SEED).slice(0, 40))).rejects.toThrow(
        /the path says|billed|final context/,
      );
    } finally {
      mutant.close();
    }
  }, 120_000);
});
