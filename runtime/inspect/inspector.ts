import type { InspectionEvent } from 'xstate';
import type { AgentContext } from '../../machines/agent/machine.ts';
import type { GoalContext } from '../../machines/goal/types.ts';
import type { RunContext } from '../../machines/run/types.ts';
import type { ApprovalRecord, Store } from '../../store/index.ts';
import type { GoalLoopConfig } from '../config/schema.ts';
import { goalStatusOf } from '../goals/goal-host.ts';
import { statusOf } from '../runs/run-status.ts';
import {
  agentFields,
  approvalFields,
  GOAL_NOT_STARTED,
  goalFields,
  runFields,
  storedGoalFields,
  storedRunFields,
} from './nodes.ts';
import { statePath } from './state-path.ts';
import { ActorTree, DEFAULT_TREE_CAPACITY } from './tree.ts';
import type { ActorEvent, ActorTreeSnapshot } from './types.ts';

/** An event type as a change's cause: the type only, and only when it is a plain short name. */
function causeOf(event: { type?: unknown } | undefined): string | undefined {
  const t = event?.type;
  return typeof t === 'string' && /^[\w.:@-]{1,120}$/.test(t) ? t : undefined;
}

/** The snapshot fields inspection reads (the value, the context, the actor's status). */
interface SnapshotLike {
  readonly status: string;
  readonly value: unknown;
  readonly context: unknown;
}

/**
 * Keeps the live actor tree from XState's inspection events of the runtime's actors (agents,
 * runs, sub-agent runs) and from the store's records (approvals; runs parked without a live
 * actor, e.g. after a restart). Only the root snapshot events of each actor are read, and of
 * them only ids, state value, status and budget counters: no JSON of the context, no I/O per
 * event (the store is read once, by `seed`, at boot).
 */
export class Inspector {
  readonly #tree: ActorTree;
  /** The epoch each goal's node shows: a stale machine (an older epoch) changes nothing. */
  readonly #goalEpochs = new Map<string, number>();

  constructor(options: { readonly capacity?: number } = {}) {
    this.#tree = new ActorTree(options.capacity ?? DEFAULT_TREE_CAPACITY);
  }

  /** The tree now, with the sequence number of its last change. */
  snapshot(): ActorTreeSnapshot & { omitted?: number } {
    return this.#tree.snapshot();
  }

  /** Listens to every change of the tree; returns the removal. */
  on(listener: (e: ActorEvent) => void): () => void {
    return this.#tree.on(listener);
  }

  /** An inspection event of a run actor: its root snapshots are read, as `onRunSnapshot`. */
  onRunInspection(runId: string, e: InspectionEvent): void {
    if (e.type !== '@xstate.snapshot' || e.actorRef.sessionId !== e.rootId) return;
    this.onRunSnapshot(runId, e.snapshot, e.event);
  }

  /**
   * A state a run actor took, with the event that made it (RunHost's observer: each root
   * transition, and the first state with `xstate.init`): the run's node follows it.
   */
  onRunSnapshot(runId: string, snapshot: unknown, event: { readonly type?: unknown } | undefined): void {
    const s = snapshot as SnapshotLike;
    if (s.status === 'done' || s.status === 'error') {
      // The end is reported by `runEnded` (after the final snapshot, the run is gone).
      this.#tree.remove(runId, causeOf(event));
      return;
    }
    if (s.status !== 'active') return;
    const ctx = s.context as RunContext;
    const state = statePath(s.value);
    const status = statusOf(s as Parameters<typeof statusOf>[0]);
    // Most snapshots change nothing shown: compared field by field before anything is built.
    const prev = this.#tree.get(runId);
    if (
      prev !== undefined &&
      prev.state === state &&
      prev.status === status &&
      prev.budgets?.modelCalls?.used === ctx.used.modelCalls &&
      prev.budgets.toolCalls?.used === ctx.used.toolCalls
    )
      return;
    this.#tree.put(runFields(ctx, state, status), causeOf(event));
  }

  /** An inspection event of an agent actor. */
  onAgentInspection(e: InspectionEvent): void {
    if (e.type !== '@xstate.snapshot' || e.actorRef.sessionId !== e.rootId) return;
    const s = e.snapshot as unknown as SnapshotLike;
    if (s.status !== 'active') return;
    this.#tree.put(agentFields(s.context as AgentContext, statePath(s.value)), causeOf(e.event));
  }

  /**
   * An inspection event of a goal machine (GoalHost's hook): the goal's node follows its
   * snapshots, and stays after the machine reached a final state (a configured goal is always
   * shown). Reads the state value, the status and the counters: never the objective or evidence.
   */
  onGoalInspection(goalId: string, e: InspectionEvent): void {
    if (e.type !== '@xstate.snapshot' || e.actorRef.sessionId !== e.rootId) return;
    const s = e.snapshot as unknown as SnapshotLike;
    if (s.status !== 'active' && s.status !== 'done') return;
    const ctx = s.context as GoalContext;
    if (ctx.goalId !== goalId || ctx.epoch < (this.#goalEpochs.get(goalId) ?? 0)) return;
    this.#goalEpochs.set(goalId, ctx.epoch);
    const state = statePath(s.value);
    this.#tree.put(
      goalFields({
        goalId,
        agentId: ctx.agentId,
        state,
        status: goalStatusOf(s as Parameters<typeof goalStatusOf>[0]),
        parked: state === 'active.parked',
        iteration: ctx.iteration,
        maxIterations: ctx.maxIterations,
        budget: ctx.budget,
        used: ctx.used,
      }),
      causeOf(e.event),
    );
  }

  /**
   * Every configured goal loop as a node, from its stored record (at boot, before the goal
   * machines are restored): a goal never started shows `not_started` and its configured limits.
   * One read of each goal's row; no snapshot decoded.
   */
  seedGoals(goals: readonly GoalLoopConfig[], store: Store): void {
    for (const g of goals) {
      const record = store.goals.get(g.id);
      if (record !== null) {
        this.#goalEpochs.set(g.id, record.epoch);
        this.#tree.put(storedGoalFields(record), 'store');
        continue;
      }
      this.#tree.put(
        goalFields({
          goalId: g.id,
          agentId: g.agent,
          state: GOAL_NOT_STARTED,
          parked: false,
          iteration: 0,
          maxIterations: g.maxIterations,
          budget: g.budget ?? {},
          used: { modelCalls: 0, toolCalls: 0 },
        }),
        'store',
      );
    }
  }

  /** An approval was opened (its row is committed); a pending one joins the tree under its run. */
  approvalOpened(approval: ApprovalRecord, interaction: RunContext['interaction']): void {
    if (approval.status !== 'pending') return;
    this.#tree.put(approvalFields(approval, interaction === 'unattended'), 'approval.requested');
  }

  /** An approval was decided or expired: it leaves the tree. */
  approvalResolved(approval: ApprovalRecord): void {
    if (approval.status === 'pending') return;
    this.#tree.remove(approval.id, `approval.${approval.status}`);
  }

  /** A run ended: it leaves the tree. */
  runEnded(runId: string): void {
    this.#tree.remove(runId, 'run.ended');
  }

  /**
   * Reads the runs waiting for a human and the pending approvals from the store (at boot, before
   * parked runs are resumed): a parked run has no live actor until its decision arrives. Two
   * queries, no snapshot decoded.
   */
  seed(store: Store, pending: readonly ApprovalRecord[] = store.approvals.listPending()): void {
    for (const summary of store.snapshots.list({ status: 'waiting_for_approval' })) {
      if (this.#tree.get(summary.runId) === undefined) this.#tree.put(storedRunFields(summary), 'store');
    }
    for (const approval of pending) {
      const run = approval.runId === null ? undefined : this.#tree.get(approval.runId);
      // Pending with no live run: it waits in the Inbox.
      this.#tree.put(approvalFields(approval, run === undefined || run.parked), 'store');
    }
  }
}
