// Model-based restart testing of the goal machine with its real host (GoalHost) over a real
// store, and a simulated run layer (the runs of the iterations, deduplicated by message id like
// the runtime's agent queue). A path of the machine (from `@xstate/graph`) becomes what the
// world does: the bus acknowledges or refuses an iteration's message, its run parks on an
// approval, goes on once a human decided it, ends (with its usage and maybe a completion claim),
// and a human pauses, resumes or cancels the goal. A "process" is a GoalHost; a crash drops it
// after some step (its effects never settle, nothing of it runs again), and a restart is a new
// GoalHost that restores the goal from what was persisted, as the runtime does at boot.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goalMachine } from '../../machines/goal/machine.ts';
import type { GoalContext, GoalLimits, IterationOutcome } from '../../machines/goal/types.ts';
import type { RunContext, RunOutcome } from '../../machines/run/types.ts';
import { GoalHost } from '../../runtime/goals/goal-host.ts';
import {
  openStore,
  Redactor,
  type ApprovalRecord,
  type GoalRecord,
  type IterationRecord,
} from '../../store/index.ts';

/** What the world does in one step of a path. */
export type WorldAct =
  | { readonly kind: 'ack' } // the bus acknowledges the iteration's message: its run starts
  | { readonly kind: 'refuse' } // the bus refuses it: the iteration cannot start
  | { readonly kind: 'park' } // the run waits for a human's approval
  | { readonly kind: 'unpark' } // the human approves: the run goes on
  | {
      readonly kind: 'end';
      readonly outcome: IterationOutcome;
      readonly usage: { readonly modelCalls: number; readonly toolCalls: number };
      readonly claim: string | null;
      /** The run starts and ends before the bus acknowledged its message (the next act is `ack`). */
      readonly early: boolean;
    }
  | { readonly kind: 'control'; readonly action: 'pause' | 'resume' | 'cancel' };

/** One path of the machine as the world's acts, each with the machine's state after it. */
export interface GoalPath {
  readonly name: string;
  readonly maxIterations: number;
  readonly budget: GoalLimits;
  readonly acts: readonly { readonly act: WorldAct; readonly value: unknown }[];
  /** The machine's state at the start and at the end of the path. */
  readonly initial: unknown;
  readonly final: { readonly value: unknown; readonly context: GoalContext };
}

/** What one play of a path left behind. */
export interface GoalRunResult {
  readonly goal: GoalRecord;
  readonly iterations: IterationRecord[];
  /** The machine's persisted state and context at the end. */
  readonly value: unknown;
  readonly context: GoalContext;
  /** How often each run was created (must be once each). */
  readonly creations: Map<string, number>;
  /** The approvals the runs waited on, and those the human (the world) decided. */
  readonly approvals: ApprovalRecord[];
  readonly decided: Set<string>;
  /** The goal after it was started again and every run of the ended epoch reported again (final paths only). */
  readonly nextEpoch: GoalRecord | null;
}

const NOW = 1_000_000;
/** Each run took this long (the host bills `clock - startedAt`; the paths' events say the same). */
export const RUN_WALL_MS = 10;
const settle = () => new Promise((r) => setImmediate(r));
const never = <T>() => new Promise<T>(() => {});
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

interface SimRun {
  readonly runId: string;
  used: { modelCalls: number; toolCalls: number };
  status: 'running' | 'waiting_for_approval' | 'completed' | 'failed';
  outcome: RunOutcome | null;
  approvalId: string | null;
}

interface Start {
  readonly agentId: string;
  readonly messageId: string;
  readonly resolve: () => void;
  readonly reject: (e: Error) => void;
}

interface Proc {
  crashed: boolean;
  host: GoalHost;
  /** The iteration messages this process sent that the bus has not acknowledged yet. */
  readonly starts: Start[];
}

/** Plays paths of the goal machine through the real GoalHost, optionally crashing after one step. */
export class GoalRestartHarness {
  readonly dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-goal-mbt-')));
  readonly store = openStore({
    path: join(this.dir, 'snotra.db'),
    redactor: new Redactor(),
    clock: () => NOW,
  });
  #n = 0;

  constructor(private readonly machine: typeof goalMachine = goalMachine) {}

  /**
   * Plays a path; with `crashAt` = k, the process is dropped after the path's k-th act (0: as
   * soon as the goal started) and a new one restores the goal and plays the rest.
   */
  async run(path: GoalPath, crashAt: number | null): Promise<GoalRunResult> {
    const store = this.store;
    const goalId = `g${++this.#n}`;
    const where = (k: number) =>
      `${path.name}${crashAt === null ? '' : ` (crash after ${crashAt})`}, act ${k}`;
    const runs = new Map<string, SimRun>();
    const creations = new Map<string, number>();
    const decided = new Set<string>();
    const approvals: string[] = [];
    const ctxOf = (run: SimRun): RunContext =>
      ({
        runId: run.runId,
        startedAt: NOW - RUN_WALL_MS,
        used: run.used,
        outcome: run.outcome,
      }) as unknown as RunContext;
    const persist = (run: SimRun) =>
      store.snapshots.put({
        runId: run.runId,
        agentId: 'worker',
        surface: 'goal',
        status: run.status,
        parentRunId: null,
        snapshot: { context: ctxOf(run) as unknown as Record<string, unknown> },
        updatedAt: NOW,
      });
    let proc: Proc;
    /** The agent queue: one run per message id, however often it is sent. */
    const create = (agentId: string, messageId: string) => {
      const runId = `${agentId}:${messageId}`;
      if (runs.has(runId)) return;
      if (store.goals.iterationOfRun(runId) === null)
        throw new Error(`${path.name}: run ${runId} started without a recorded iteration`);
      creations.set(runId, (creations.get(runId) ?? 0) + 1);
      const run: SimRun = {
        runId,
        used: { modelCalls: 0, toolCalls: 0 },
        status: 'running',
        outcome: null,
        approvalId: null,
      };
      runs.set(runId, run);
      persist(run);
      // Like the run host: a new run reports its first status.
      proc.host.runStatus(runId, 'running');
    };
    const end = (run: SimRun, outcome: RunOutcome, tell = true) => {
      run.outcome = outcome;
      run.status = outcome.status === 'completed' ? 'completed' : 'failed';
      persist(run);
      if (tell) proc.host.runEnded(run.runId, outcome, ctxOf(run));
    };
    const spawn = (): Proc => {
      const p: Proc = { crashed: false, host: undefined as unknown as GoalHost, starts: [] };
      p.host = new GoalHost({
        store,
        clock: () => NOW,
        goals: [
          {
            id: goalId,
            agent: 'worker',
            objective: 'reach the objective',
            maxIterations: path.maxIterations,
            budget: path.budget,
          },
        ],
        agentBudget: () => ({ modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 }),
        startRun: (agentId, messageId) =>
          p.crashed
            ? never()
            : new Promise((resolve, reject) => p.starts.push({ agentId, messageId, resolve, reject })),
        cancelRun: (runId) => {
          const run = runs.get(runId);
          if (p.crashed || run === undefined || run.outcome !== null) return false;
          end(run, { status: 'failed', reason: 'cancelled: goal cancelled by a human' });
          return true;
        },
        runContext: (runId) => {
          const run = runs.get(runId);
          return run === undefined ? null : ctxOf(run);
        },
        log: () => {},
        machine: this.machine,
      });
      return p;
    };
    const stored = () =>
      store.goals.snapshotOf(goalId)?.snapshot as { value?: unknown; context?: GoalContext };
    /** Waits (a bounded number of turns, never a fixed time) until the goal rests in `value`. */
    const reach = async (value: unknown, what: string) => {
      for (let i = 0; i < 200 && !same(stored()?.value, value); i++) await settle();
      // Deferred effects (a cancel's run end, a catch-up) land before the next step.
      for (let i = 0; i < 3; i++) await settle();
      const now = stored()?.value;
      if (!same(now, value))
        throw new Error(
          `${what}: the goal is ${JSON.stringify(now)}, the path says ${JSON.stringify(value)}`,
        );
    };
    const pendingStart = async (what: string): Promise<Start> => {
      for (let i = 0; i < 200 && proc.starts.length === 0; i++) await settle();
      const start = proc.starts[0];
      if (start === undefined) throw new Error(`${what}: no iteration message was sent`);
      return start;
    };
    /** The run of the goal's latest iteration (the one the machine is on). */
    const current = (what: string): SimRun => {
      const epoch = store.goals.get(goalId)?.epoch ?? 0;
      const it = store.goals.iteration(goalId, epoch, store.goals.lastIteration(goalId, epoch));
      const run = it === null ? undefined : runs.get(it.runId);
      if (run === undefined) throw new Error(`${what}: no run to act on`);
      return run;
    };
    /** A late, repeated notice of every run that ended: a stale run's end bills nothing. */
    const staleNotices = () => {
      for (const run of runs.values())
        if (run.outcome !== null) proc.host.runEnded(run.runId, run.outcome, ctxOf(run));
    };

    /** What a run does; `tell`: the live host hears it now (otherwise the next host finds it stored). */
    const runAct = async (act: WorldAct, at: string, tell: boolean) => {
      if (act.kind === 'end' && act.early) {
        // The run's message reached its agent before the ack: it runs and ends at once.
        const start = await pendingStart(at);
        create(start.agentId, start.messageId);
      }
      const run = current(at);
      if (act.kind === 'park') {
        const n = approvals.length + 1;
        const id = `appr-${goalId}-${n}`;
        store.approvals.create({
          id,
          callId: `call-${goalId}-${n}`,
          runId: run.runId,
          sessionId: 'goal',
          taskId: goalId,
          agentId: 'worker',
          parentAgentId: null,
          parentRunId: null,
          surface: 'goal',
          tool: 'send_message',
          args: { channel: 'ops' },
          target: null,
          risk: 'external',
          reason: 'mode_ask',
          ruleId: 'mode.ask',
          idempotencyKey: `idem-${goalId}-${n}`,
          createdAt: NOW,
          expiresAt: NOW + 3_600_000,
        });
        approvals.push(id);
        run.approvalId = id;
        run.status = 'waiting_for_approval';
        persist(run);
        if (tell) proc.host.runStatus(run.runId, 'waiting_for_approval');
      } else if (act.kind === 'unpark') {
        if (run.approvalId !== null) {
          store.approvals.decide(run.approvalId, 'approved', 'human', NOW);
          decided.add(run.approvalId);
        }
        run.status = 'running';
        persist(run);
        if (tell) proc.host.runStatus(run.runId, 'resuming');
      } else if (act.kind === 'end') {
        // `goal_complete` writes the claim to the store (through the live host's tool).
        if (act.claim !== null) {
          if (tell) proc.host.claim(run.runId, act.claim);
          else store.goals.claim(run.runId, act.claim);
        }
        run.used = { ...act.usage };
        end(run, act.outcome, tell);
      }
    };

    proc = spawn();
    store.goals.requestControl(goalId, 'start', 'test');
    proc.host.start();
    /**
     * The crash after act k; on an odd k, a run's next act (park, decision, end) happens while no
     * process runs: the new host must find it in the store (reconcile), nobody tells it.
     */
    let heardAtRestore = -1;
    const restart = async (k: number) => {
      proc.crashed = true;
      const next = path.acts[k];
      const down =
        k % 2 === 1 &&
        next !== undefined &&
        (next.act.kind === 'park' ||
          next.act.kind === 'unpark' ||
          (next.act.kind === 'end' && !next.act.early));
      if (down) await runAct(next.act, `${where(k + 1)} (while down)`, false);
      proc = spawn();
      proc.host.start();
      if (down) heardAtRestore = k;
      await reach(
        down ? next.value : k === 0 ? path.initial : path.acts[k - 1]?.value,
        `${where(k)}: restored`,
      );
    };
    await reach(path.initial, where(0));
    if (crashAt === 0) await restart(0);
    for (const [i, { act, value }] of path.acts.entries()) {
      const at = where(i + 1);
      // A run's act that happened while the runtime was down was heard at the restore.
      if (heardAtRestore !== i)
        switch (act.kind) {
          case 'ack': {
            const start = await pendingStart(at);
            proc.starts.shift();
            create(start.agentId, start.messageId);
            start.resolve();
            break;
          }
          case 'refuse': {
            const start = await pendingStart(at);
            proc.starts.shift();
            start.reject(new Error('the bus refused the message'));
            break;
          }
          case 'park':
          case 'unpark':
          case 'end':
            await runAct(act, at, true);
            break;
          case 'control':
            store.goals.requestControl(goalId, act.action, 'test');
            proc.host.applyControls();
            break;
        }
      await reach(value, at);
      // While parked, the goal says so and the approval waits for the human: nobody decides it.
      const record = store.goals.get(goalId) as GoalRecord;
      const parked = same(value, { active: 'parked' });
      if (record.parked !== parked)
        throw new Error(`${at}: stored parked=${record.parked}, the path says ${parked}`);
      staleNotices();
      await reach(value, `${at}: after stale notices`);
      if (crashAt === i + 1) await restart(i + 1);
    }
    const goal = store.goals.get(goalId) as GoalRecord;
    const last = stored();
    const result = {
      goal,
      iterations: store.goals.iterations(goalId, goal.epoch),
      value: last?.value,
      context: last?.context as GoalContext,
      creations,
      approvals: approvals.map((id) => store.approvals.get(id) as ApprovalRecord),
      decided,
    };
    let nextEpoch: GoalRecord | null = null;
    if (goal.status !== 'active' && goal.status !== 'paused') {
      // Started again: every run of the ended epoch reports its end and its status once more.
      store.goals.requestControl(goalId, 'start', 'test');
      proc.host.applyControls();
      await reach(path.initial, `${path.name}: started again`);
      staleNotices();
      for (const run of runs.values()) proc.host.runStatus(run.runId, 'waiting_for_approval');
      await reach(path.initial, `${path.name}: started again, after stale notices`);
      nextEpoch = store.goals.get(goalId);
    }
    proc.host.stop();
    return { ...result, nextEpoch };
  }

  close(): void {
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
