import { createActor, fromPromise, type Actor, type InspectionEvent, type SnapshotFrom } from 'xstate';
import { goalMachine, iterationMessageId, iterationRunId } from '../../machines/goal/machine.ts';
import { storedContext } from '../runs/stored-run.ts';
import type { BeginIterationInput, GoalContext, GoalSpent } from '../../machines/goal/types.ts';
import { tokensOf, usageSlice } from '../../machines/run/budget.ts';
import type { Budget, BudgetDimension, RunContext, RunOutcome } from '../../machines/run/types.ts';
import type { GoalStatusView, GoalClaimOutcome } from '../../actors/tools/goal.ts';
import { goalStatusView } from './status-view.ts';
import {
  FINAL_GOAL_STATUSES,
  type GoalControl,
  type GoalRecord,
  type GoalStatus,
  type IterationBudget,
  type Store,
} from '../../store/index.ts';
import type { GoalLoopConfig } from '../config/schema.ts';

type GoalActor = Actor<typeof goalMachine>;
type GoalSnapshot = SnapshotFrom<typeof goalMachine>;

/** What a goal iteration's run starts with. */
export interface IterationLimits {
  readonly budget: Budget;
  /** What approving a request for more of each limit the goal sets grants (tokens, cost). */
  readonly grants: Partial<Record<BudgetDimension, number>>;
}

/** What the goal host needs from the runtime. */
export interface GoalHostDeps {
  readonly store: Store;
  readonly clock: () => number;
  /** Every configured goal loop (`surfaces.goalLoops`). */
  readonly goals: readonly GoalLoopConfig[];
  /** The agent's own limits of one run (its config budget over the defaults). */
  readonly agentBudget: (agentId: string) => Budget;
  /**
   * Sends an iteration's message to its agent: an unattended run, surface `goal`; idempotent by
   * message id. `after`: the run of the iteration before it (null for the first), whose trace the
   * new run continues.
   */
  readonly startRun: (
    agentId: string,
    messageId: string,
    text: string,
    after: string | null,
  ) => Promise<void>;
  /** Cancels a run (live or parked); false when there is no run to cancel. */
  readonly cancelRun: (runId: string, reason: string) => boolean;
  /** What a run spent so far, when it is live or stored (for `goal_status`). */
  readonly runContext: (runId: string) => RunContext | null;
  readonly log: (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string) => void;
  /** Hears every change of a goal's stored state (after it is written). Must not throw. */
  readonly onChange?: (goal: GoalRecord) => void;
  /** Receives XState's inspection events of every goal machine (the live actor tree). Must not throw. */
  readonly inspect?: (goalId: string, event: InspectionEvent) => void;
  /** The goal machine to host; default `goalMachine` (the model-based tests pass a broken one). */
  readonly machine?: typeof goalMachine;
}

/** The durable status of a goal machine's snapshot. */
export function goalStatusOf(s: GoalSnapshot): GoalStatus {
  const v = s.value;
  if (typeof v === 'string') return v === 'paused' ? 'paused' : (v as GoalStatus);
  return s.context.pauseRequested ? 'paused' : 'active';
}

const TERMINAL_RUN = new Set(['completed', 'failed', 'denied']);

/**
 * Hosts the goal machines (one per goal that runs): persists each one's snapshot with the goal's
 * state under its epoch at every change, provides its effects (record the iteration durably,
 * then start its run: both idempotent, so an effect that re-runs after a restart finds the same
 * iteration and the same run), feeds it the end, park and resume of its runs, and applies the
 * human's control requests. At boot it restores every goal that was active or paused exactly
 * where it was, and tells a restored machine what its run did while the runtime was down.
 */
export class GoalHost {
  readonly #live = new Map<string, GoalActor>();
  readonly #machine;
  #stopped = false;

  constructor(private readonly deps: GoalHostDeps) {
    this.#machine = (deps.machine ?? goalMachine).provide({
      actors: {
        beginIteration: fromPromise<{ runId: string }, BeginIterationInput>(async ({ input }) =>
          this.#beginIteration(input),
        ),
      },
      actions: {
        cancelRun: ({ context }, params: { runId: string | null }) => {
          // The current iteration's run, or one recorded and on its way (cancelled while starting):
          // a run that does not exist yet is cancelled as it reports its first status (runStatus).
          const latest = this.deps.store.goals.iteration(
            context.goalId,
            context.epoch,
            context.iteration + 1,
          );
          const runId = params.runId ?? (latest?.status === 'started' ? latest.runId : null);
          // Deferred: the goal's own transition finishes first (the run's end is then stale).
          if (runId !== null) queueMicrotask(() => this.deps.cancelRun(runId, 'goal cancelled by a human'));
        },
      },
    });
  }

  /** Restores every goal that was active or paused, then applies the requests made while down. */
  start(): void {
    for (const goal of this.deps.store.goals.list()) {
      if (goal.status !== 'active' && goal.status !== 'paused') continue;
      const config = this.#config(goal.goalId);
      if (config === undefined) {
        this.deps.log('warn', { goal: goal.goalId }, 'goal: not in the config any more; left as it was');
        continue;
      }
      this.#spawn(goal);
    }
    this.applyControls();
  }

  /** Applies the human's pending requests (start, pause, resume, cancel), oldest first. */
  applyControls(): void {
    if (this.#stopped) return;
    for (const control of this.deps.store.goals.pendingControls()) {
      let result: string;
      try {
        result = this.#apply(control);
      } catch (err) {
        result = `error: ${(err as Error).message}`;
      }
      this.deps.store.goals.markApplied(control.seq, result);
      this.deps.log(
        'info',
        { goal: control.goalId, action: control.action, result },
        'goal: control applied',
      );
    }
  }

  /**
   * The budget a goal iteration's run was given (recorded with the iteration), and what approving
   * its request for more tokens or cost grants, for the limits its goal sets (a breach of those
   * parks the run); null for other runs.
   */
  budgetFor(runId: string): IterationLimits | null {
    const it = this.deps.store.goals.iterationOfRun(runId);
    if (it === null) return null;
    const { grants, ...budget } = it.budget;
    const granted: Partial<Record<BudgetDimension, number>> = {};
    for (const d of ['tokens', 'costUsd'] as const) {
      const g = grants?.[d];
      if (g !== undefined) granted[d] = g;
    }
    return { budget: budget as Budget, grants: granted };
  }

  /** A run ended: its goal (if any) accounts it once and goes on. */
  runEnded(runId: string, outcome: RunOutcome, ctx: RunContext): void {
    const it = this.deps.store.goals.iterationOfRun(runId);
    if (it === null) return;
    const usage: GoalSpent = {
      modelCalls: ctx.used.modelCalls,
      toolCalls: ctx.used.toolCalls,
      wallTimeMs: Math.max(0, this.deps.clock() - ctx.startedAt),
      ...usageOf(ctx),
    };
    const first = this.deps.store.goals.endIteration(
      it.goalId,
      it.epoch,
      it.iteration,
      runOutcomeText(outcome),
      usage,
    );
    if (first && !this.#live.has(it.goalId)) {
      // The goal stopped while this run went on (cancelled): what it spent still counts.
      this.deps.store.goals.billStopped(it.goalId, it.epoch, usage);
      return;
    }
    this.#deliverEnd(it.goalId, it.epoch, it.iteration);
  }

  /** A goal run waits for a human (parked) or goes on again after the decision. */
  runStatus(runId: string, status: string): void {
    const it = this.deps.store.goals.iterationOfRun(runId);
    if (it === null) return;
    const goal = this.deps.store.goals.get(it.goalId);
    if (
      it.status === 'started' &&
      (goal === null || goal.epoch !== it.epoch || FINAL_GOAL_STATUSES.has(goal.status))
    ) {
      // The goal stopped (cancelled) while this iteration's run was on its way: it does not go on.
      queueMicrotask(() => this.deps.cancelRun(runId, 'its goal has stopped'));
      return;
    }
    const actor = this.#live.get(it.goalId);
    if (actor === undefined || actor.getSnapshot().context.epoch !== it.epoch) return;
    if (status === 'waiting_for_approval') actor.send({ type: 'RUN_PARKED', runId });
    else if (status === 'running' || status === 'resuming') actor.send({ type: 'RUN_RESUMED', runId });
  }

  /** `goal_status` for a run: null when the run is not an iteration of a goal. */
  status(runId: string): GoalStatusView | null {
    return goalStatusView(this.deps.store, runId, this.deps.runContext(runId), this.deps.clock());
  }

  /** `goal_complete` for a run: records the claim (the loop ends when the run ends). */
  claim(runId: string, evidence: string): GoalClaimOutcome {
    const r = this.deps.store.goals.claim(runId, evidence);
    return r.ok ? { ok: true, goalId: r.goalId, iteration: r.iteration } : r;
  }

  /** Stops every goal machine after persisting it; runs in flight are parked by the run host. */
  stop(): void {
    this.#stopped = true;
    for (const [goalId, actor] of [...this.#live]) {
      this.#persist(goalId, actor);
      this.#live.delete(goalId);
      actor.stop();
    }
  }

  #config(goalId: string): GoalLoopConfig | undefined {
    return this.deps.goals.find((g) => g.id === goalId);
  }

  #apply(control: GoalControl): string {
    const actor = this.#live.get(control.goalId);
    switch (control.action) {
      case 'start': {
        const config = this.#config(control.goalId);
        if (config === undefined) return 'unknown_goal';
        const begun = this.deps.store.goals.begin({
          goalId: config.id,
          agentId: config.agent,
          objective: config.objective,
          maxIterations: config.maxIterations,
          budget: config.budget ?? {},
        });
        if (!begun.ok) return `already_${begun.status}`;
        if (actor !== undefined) {
          this.#live.delete(control.goalId);
          actor.stop();
        }
        this.#spawn(begun.goal);
        return 'ok';
      }
      case 'pause':
      case 'resume':
      case 'cancel': {
        if (actor === undefined)
          return this.deps.store.goals.get(control.goalId) === null ? 'unknown_goal' : 'not_running';
        const before = goalStatusOf(actor.getSnapshot());
        if (control.action === 'pause' && before !== 'active') return `not_active: ${before}`;
        if (control.action === 'resume' && before !== 'paused') return `not_paused: ${before}`;
        actor.send({
          type: control.action === 'pause' ? 'PAUSE' : control.action === 'resume' ? 'RESUME' : 'CANCEL',
        });
        return 'ok';
      }
    }
  }

  #spawn(goal: GoalRecord): void {
    const stored = this.deps.store.goals.snapshotOf(goal.goalId);
    const input = {
      goalId: goal.goalId,
      epoch: goal.epoch,
      agentId: goal.agentId,
      maxIterations: goal.maxIterations,
      budget: goal.budget,
    };
    const snapshot = stored?.epoch === goal.epoch ? stored.snapshot : null;
    const hook = this.deps.inspect;
    const inspect = hook === undefined ? {} : { inspect: (e: InspectionEvent) => hook(goal.goalId, e) };
    const actor =
      snapshot === null
        ? createActor(this.#machine, { input, ...inspect })
        : createActor(this.#machine, { input, snapshot: snapshot as never, ...inspect });
    this.#live.set(goal.goalId, actor);
    let wasRunning = false;
    actor.subscribe({
      next: (snap) => {
        if (this.#live.get(goal.goalId) !== actor) return;
        const running = snap.matches({ active: 'running' });
        // Just began an iteration: its run may already be further than the machine heard.
        if (running && !wasRunning) queueMicrotask(() => this.#catchUp(goal.goalId, actor));
        wasRunning = running;
        if (!this.#persist(goal.goalId, actor)) {
          // The goal was started again (a new epoch): this machine is stale and writes nothing.
          this.#live.delete(goal.goalId);
          actor.stop();
          return;
        }
        if (actor.getSnapshot().status === 'done') this.#live.delete(goal.goalId);
      },
      error: (err) => {
        this.deps.log('error', { goal: goal.goalId, err: String(err) }, 'goal: machine error');
        this.#live.delete(goal.goalId);
      },
    });
    actor.start();
    this.#persist(goal.goalId, actor);
    if (snapshot !== null) this.#reconcile(goal.goalId, actor);
  }

  /** A run event that came before the machine knew its run id (it was starting): deliver it now. */
  #catchUp(goalId: string, actor: GoalActor): void {
    if (this.#live.get(goalId) !== actor || !actor.getSnapshot().matches({ active: 'running' })) return;
    const ctx = actor.getSnapshot().context;
    if (ctx.runId === null) return;
    const status = this.deps.store.snapshots.get(ctx.runId)?.status;
    if (status === undefined) return;
    if (TERMINAL_RUN.has(status)) this.#deliverEnd(goalId, ctx.epoch, ctx.iteration);
    else if (status === 'waiting_for_approval') actor.send({ type: 'RUN_PARKED', runId: ctx.runId });
  }

  /** After a restore: tells the machine what its current run did while the runtime was down. */
  #reconcile(goalId: string, actor: GoalActor): void {
    const ctx = actor.getSnapshot().context;
    if (ctx.accounted || ctx.runId === null || actor.getSnapshot().status !== 'active') return;
    const it = this.deps.store.goals.iteration(goalId, ctx.epoch, ctx.iteration);
    if (it === null) return;
    const stored = this.deps.store.snapshots.get(it.runId);
    if (stored === null) {
      // Recorded and sent, not started yet (the message waits on the bus): send again, idempotent.
      void this.#send(ctx, it.runId);
      return;
    }
    if (TERMINAL_RUN.has(stored.status)) {
      if (it.status === 'started') {
        const run = storedContext(stored);
        this.deps.store.goals.endIteration(
          goalId,
          it.epoch,
          it.iteration,
          runOutcomeText(run?.outcome ?? { status: 'failed', reason: 'no_outcome' }),
          {
            modelCalls: run?.used.modelCalls ?? 0,
            toolCalls: run?.used.toolCalls ?? 0,
            wallTimeMs: Math.max(0, stored.updatedAt - (run?.startedAt ?? stored.updatedAt)),
            ...(run === null ? {} : usageOf(run)),
          },
        );
      }
      this.#deliverEnd(goalId, it.epoch, it.iteration);
    } else if (stored.status === 'waiting_for_approval') {
      actor.send({ type: 'RUN_PARKED', runId: it.runId });
    } else {
      actor.send({ type: 'RUN_RESUMED', runId: it.runId });
    }
  }

  /** Sends the iteration's recorded end (outcome, usage, claim) to the goal's live machine. */
  #deliverEnd(goalId: string, epoch: number, iteration: number): void {
    const actor = this.#live.get(goalId);
    const it = this.deps.store.goals.iteration(goalId, epoch, iteration);
    if (actor === undefined || it === null || it.usage === null) return;
    if (actor.getSnapshot().context.epoch !== epoch) return;
    const [status, ...reason] = (it.outcome ?? 'failed: no_outcome').split(': ');
    actor.send({
      type: 'RUN_ENDED',
      runId: it.runId,
      outcome: {
        status: (status === 'completed' || status === 'denied' ? status : 'failed') as 'completed',
        reason: reason.join(': ') || 'unknown',
      },
      usage: it.usage,
      claim: it.claim,
    });
  }

  async #beginIteration(input: BeginIterationInput): Promise<{ runId: string }> {
    const runId = iterationRunId(input.agentId, input.goalId, input.epoch, input.iteration);
    const agent = this.deps.agentBudget(input.agentId);
    // Tokens and cost: the agent's run limit cut to what the goal has left (a breach parks).
    const limits = this.deps.store.goals.get(input.goalId)?.budget;
    const sliced = usageSlice(agent, limits, input.remaining);
    const budget: IterationBudget = {
      modelCalls: Math.min(agent.modelCalls, input.remaining.modelCalls ?? Infinity),
      toolCalls: Math.min(agent.toolCalls, input.remaining.toolCalls ?? Infinity),
      wallTimeMs: Math.min(agent.wallTimeMs, input.remaining.wallTimeMs ?? Infinity),
      ...(sliced.budget.tokens === undefined ? {} : { tokens: sliced.budget.tokens }),
      ...(sliced.budget.costUsd === undefined ? {} : { costUsd: sliced.budget.costUsd }),
      ...(Object.keys(sliced.grants).length === 0 ? {} : { grants: sliced.grants }),
    };
    // Durable before the run exists: a restart finds this record and starts the same run, never a new one.
    const { record } = this.deps.store.goals.recordIteration({
      goalId: input.goalId,
      epoch: input.epoch,
      iteration: input.iteration,
      runId,
      budget,
    });
    const ctx = { goalId: input.goalId, epoch: input.epoch, agentId: input.agentId } as GoalContext;
    await this.#send(ctx, record.runId);
    return { runId: record.runId };
  }

  async #send(ctx: Pick<GoalContext, 'goalId' | 'epoch' | 'agentId'>, runId: string): Promise<void> {
    const goal = this.deps.store.goals.get(ctx.goalId);
    const it = this.deps.store.goals.iterationOfRun(runId);
    if (goal === null || it === null)
      throw new Error(`goal ${ctx.goalId}: iteration of ${runId} not recorded`);
    await this.deps.startRun(
      ctx.agentId,
      iterationMessageId(ctx.goalId, it.epoch, it.iteration),
      goal.objective,
      it.iteration > 1 ? iterationRunId(ctx.agentId, ctx.goalId, it.epoch, it.iteration - 1) : null,
    );
  }

  #persist(goalId: string, actor: GoalActor): boolean {
    const s = actor.getSnapshot();
    const c = s.context;
    const saved = this.deps.store.goals.save(goalId, c.epoch, {
      status: goalStatusOf(s),
      stopReason: c.stopReason,
      parked: s.matches({ active: 'parked' }),
      // Counts an iteration recorded while starting (its run on its way) too.
      iteration: Math.max(c.iteration, this.deps.store.goals.lastIteration(goalId, c.epoch)),
      used: c.used,
      evidence: c.evidence,
      snapshot: actor.getPersistedSnapshot() as unknown as Record<string, unknown>,
    });
    if (saved && this.deps.onChange !== undefined) {
      const goal = this.deps.store.goals.get(goalId);
      if (goal !== null) this.deps.onChange(goal);
    }
    return saved;
  }
}

/** The tokens and cost a run used, as a goal counts them (absent: it reported none). */
function usageOf(ctx: RunContext): Pick<GoalSpent, 'tokens' | 'costUsd'> {
  if (ctx.tokens === undefined) return {};
  return {
    tokens: tokensOf(ctx.tokens),
    ...(ctx.tokens.costUsd === undefined ? {} : { costUsd: ctx.tokens.costUsd }),
  };
}

function runOutcomeText(outcome: RunOutcome): string {
  return `${outcome.status}: ${outcome.reason}`;
}
