// Model-based restart testing of the goal machine with its real host (GoalHost) over a real
// store, and a simulated run layer (the runs of the iterations, deduplicated by message id like
// the runtime's agent queue). A "process" is a GoalHost; a crash drops it at a quiet point (its
// effects never settle, nothing of it runs again), and a restart is a new GoalHost that restores
// the goal from what was persisted, as the runtime does at boot.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goalMachine } from '../../machines/goal/machine.ts';
import type { RunContext, RunOutcome } from '../../machines/run/types.ts';
import { GoalHost } from '../../runtime/goals/goal-host.ts';
import { openStore, Redactor, type GoalRecord, type IterationRecord, type Store } from '../../store/index.ts';

/** What the world does next: to the current iteration's run, or as the human. */
export type WorldStep =
  | 'end' // the run ends with a final answer (1 model call, 1 tool call)
  | 'park' // the run waits for an approval
  | 'unpark' // the approval is decided: the run goes on
  | 'claim' // the model calls goal_complete
  | 'fail' // the run fails (model_error)
  | 'cut' // the run uses all it was given and fails on its budget
  | 'early' // the run ends before the goal heard it started
  | 'pause'
  | 'resume'
  | 'cancel';

/** One path: the world's steps in order, the goal's limits. */
export interface GoalScenario {
  readonly name: string;
  readonly steps: readonly WorldStep[];
  readonly maxIterations: number;
  readonly budget: { modelCalls?: number; toolCalls?: number };
}

/** What one scenario run left behind. */
export interface GoalRunResult {
  readonly goal: GoalRecord;
  readonly iterations: IterationRecord[];
  /** How often each run was created (must be once each). */
  readonly creations: Map<string, number>;
  /** Await points passed (a crash may be placed at each). */
  readonly points: number;
  /** The machine's state at each point (persisted snapshot values). */
  readonly states: Set<string>;
}

const NOW = 1_000_000;
const settle = () => new Promise((r) => setImmediate(r));

interface SimRun {
  readonly runId: string;
  readonly iteration: number;
  used: { modelCalls: number; toolCalls: number };
  status: 'running' | 'waiting_for_approval' | 'completed' | 'failed';
}

/** The simulated run layer and the store, shared by the processes of one scenario run. */
class World {
  readonly runs = new Map<string, SimRun>();
  readonly creations = new Map<string, number>();
  constructor(
    readonly store: Store,
    readonly goalId: string,
  ) {}

  create(agentId: string, messageId: string): void {
    const runId = `${agentId}:${messageId}`;
    // The agent queue acks a message whose run exists: one run per message id, however often sent.
    if (this.runs.has(runId)) return;
    const it = this.store.goals.iterationOfRun(runId);
    if (it === null) throw new Error(`run ${runId} started without a recorded iteration`);
    this.creations.set(runId, (this.creations.get(runId) ?? 0) + 1);
    const run: SimRun = {
      runId,
      iteration: it.iteration,
      used: { modelCalls: 0, toolCalls: 0 },
      status: 'running',
    };
    this.runs.set(runId, run);
    this.persist(run, null);
    // Like the run host: a new run reports its first status.
    this.onStatus?.(runId, 'running');
  }

  onStatus: ((runId: string, status: string) => void) | null = null;

  context(run: SimRun, outcome: RunOutcome | null): RunContext {
    return { runId: run.runId, startedAt: NOW - 10, used: run.used, outcome } as unknown as RunContext;
  }

  persist(run: SimRun, outcome: RunOutcome | null): void {
    this.store.snapshots.put({
      runId: run.runId,
      agentId: 'worker',
      surface: 'goal',
      status: run.status,
      parentRunId: null,
      snapshot: { context: this.context(run, outcome) as unknown as Record<string, unknown> },
      updatedAt: NOW,
    });
  }

  current(): SimRun | null {
    const open = [...this.runs.values()].filter(
      (r) => r.status === 'running' || r.status === 'waiting_for_approval',
    );
    return open[open.length - 1] ?? null;
  }
}

const never = <T>() => new Promise<T>(() => {});

/** Runs goal scenarios through the real GoalHost, optionally crashing at one await point. */
export class GoalRestartHarness {
  readonly dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-goal-mbt-')));
  readonly store = openStore({
    path: join(this.dir, 'snotra.db'),
    redactor: new Redactor(),
    clock: () => NOW,
  });
  #n = 0;

  constructor(private readonly machine: typeof goalMachine = goalMachine) {}

  /** One process: a GoalHost whose effects stop for good once it has crashed. */
  #spawn(world: World, scenario: GoalScenario): { host: GoalHost; proc: { crashed: boolean } } {
    const proc = { crashed: false };
    const host: GoalHost = new GoalHost({
      store: this.store,
      clock: () => NOW,
      goals: [
        {
          id: world.goalId,
          agent: 'worker',
          objective: 'reach the objective',
          maxIterations: scenario.maxIterations,
          budget: scenario.budget,
        },
      ],
      agentBudget: () => ({ modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 }),
      startRun: async (agentId, messageId) => {
        if (proc.crashed) return never();
        world.create(agentId, messageId);
        // The bus acknowledges later: a crash may fall between the run's start and the ack.
        await settle();
        await settle();
        if (proc.crashed) return never();
      },
      cancelRun: (runId) => {
        const run = world.runs.get(runId);
        if (run === undefined || proc.crashed) return false;
        const outcome: RunOutcome = { status: 'failed', reason: 'cancelled: goal cancelled by a human' };
        run.status = 'failed';
        world.persist(run, outcome);
        host.runEnded(runId, outcome, world.context(run, outcome));
        return true;
      },
      runContext: (runId) => {
        const run = world.runs.get(runId);
        return run === undefined ? null : world.context(run, null);
      },
      log: () => {},
      machine: this.machine,
    });
    world.onStatus = (runId, status) => {
      if (!proc.crashed) host.runStatus(runId, status);
    };
    return { host, proc };
  }

  /** Runs a scenario; with `crashAt`, the process is dropped at that await point and a new one restores. */
  async run(scenario: GoalScenario, crashAt: number | null): Promise<GoalRunResult> {
    const world = new World(this.store, `g${++this.#n}`);
    const states = new Set<string>();
    let { host, proc } = this.#spawn(world, scenario);
    this.store.goals.requestControl(world.goalId, 'start', 'test');
    host.start();
    const steps = [...scenario.steps];
    let points = 0;
    let lastEnded: { runId: string; outcome: RunOutcome; ctx: RunContext } | null = null;
    for (let guard = 0; guard < 500; guard++) {
      await settle();
      points++;
      const value = (this.store.goals.snapshotOf(world.goalId)?.snapshot as { value?: unknown } | null)
        ?.value;
      if (value !== undefined) states.add(stateKey(value));
      if (points === crashAt) {
        // Crash: this process does nothing more; a new one restores from the store.
        proc.crashed = true;
        ({ host, proc } = this.#spawn(world, scenario));
        host.start();
        await settle();
      }
      const goal = this.store.goals.get(world.goalId);
      if (goal === null) throw new Error('goal not started');
      if (goal.status !== 'active' && goal.status !== 'paused') break;
      const run = world.current();
      const next = steps[0];
      if (next === 'pause' || next === 'resume' || next === 'cancel') {
        steps.shift();
        this.store.goals.requestControl(world.goalId, next, 'test');
        host.applyControls();
        continue;
      }
      if (run === null) {
        // Nothing in flight: a paused goal at rest waits for the human, who resumes it here.
        if (value === 'paused') {
          this.store.goals.requestControl(world.goalId, 'resume', 'test');
          host.applyControls();
        }
        continue;
      }
      if (lastEnded !== null && lastEnded.runId !== run.runId && stateKey(value) === 'goal.active.running') {
        // A late, repeated notice of the previous run's end: a stale iteration must bill nothing.
        host.runEnded(lastEnded.runId, lastEnded.outcome, lastEnded.ctx);
        lastEnded = null;
        continue;
      }
      // The world acts on a run once the goal knows it (running or parked); `early` ends the run
      // while the goal is still starting (its end must be caught up, not lost).
      const known = ['goal.active.running', 'goal.active.parked'].includes(stateKey(value));
      if (!known && steps[0] !== 'early') continue;
      const step = steps.shift() ?? 'end';
      const budget = this.store.goals.iterationOfRun(run.runId)?.budget;
      if (step === 'park' && run.status === 'running') {
        run.status = 'waiting_for_approval';
        world.persist(run, null);
        host.runStatus(run.runId, 'waiting_for_approval');
      } else if (step === 'unpark' && run.status === 'waiting_for_approval') {
        run.status = 'running';
        world.persist(run, null);
        host.runStatus(run.runId, 'resuming');
      } else if (step === 'claim') {
        host.claim(run.runId, 'the tests pass');
      } else {
        // end, fail, cut (and a park/unpark that does not apply now): the run ends within its budget.
        const cut = step === 'cut';
        run.used = cut
          ? { modelCalls: budget?.modelCalls ?? 1, toolCalls: budget?.toolCalls ?? 1 }
          : {
              modelCalls: Math.min(1, budget?.modelCalls ?? 1),
              toolCalls: Math.min(1, budget?.toolCalls ?? 1),
            };
        const outcome: RunOutcome =
          step === 'fail'
            ? { status: 'failed', reason: 'model_error' }
            : cut
              ? { status: 'failed', reason: 'budget_model_calls' }
              : { status: 'completed', reason: 'final_answer' };
        run.status = outcome.status === 'completed' ? 'completed' : 'failed';
        world.persist(run, outcome);
        const ctx = world.context(run, outcome);
        host.runEnded(run.runId, outcome, ctx);
        lastEnded = { runId: run.runId, outcome, ctx };
      }
    }
    host.stop();
    const goal = this.store.goals.get(world.goalId) as GoalRecord;
    return {
      goal,
      iterations: this.store.goals.iterations(world.goalId, goal.epoch),
      creations: world.creations,
      points,
      states,
    };
  }

  close(): void {
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function stateKey(value: unknown, prefix = 'goal'): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return `${prefix}.${value}`;
  const [k, v] = Object.entries(value as Record<string, unknown>)[0] ?? ['?', '?'];
  return stateKey(v, `${prefix}.${k}`);
}
