/**
 * The live actor tree as surfaces see it (the shared contract of `GET /v1/actors`, the `actor.*`
 * events and `snotra inspect`). Only ids, state names, statuses, tool names, budgets and counters:
 * never an argument value, a message, model text or a path.
 */

/** What kind of actor a node is. */
export const ActorKind = {
  agent: 'agent',
  run: 'run',
  approval: 'approval',
  goal: 'goal',
} as const;
export type ActorKind = (typeof ActorKind)[keyof typeof ActorKind];

/** A budget as spent so far against its limit (null: no limit). */
export interface BudgetUse {
  readonly used: number;
  readonly limit: number | null;
}

/** One actor without its children: what an `actor.*` event carries. */
export interface ActorFields {
  /** Stable: agent id, run id, approval id, goal id. */
  readonly id: string;
  readonly kind: ActorKind;
  /** A machine name `GET /v1/machines/:name` accepts. */
  readonly machine: string;
  /** The machine's current state value as a dotted path (`running.thinking`). */
  readonly state: string;
  /** A run waiting on an unattended approval (or such an approval, or a goal whose current run waits so). */
  readonly parked: boolean;
  /** The run's, approval's or goal's status where the store has one (`pending`, `waiting_for_approval`, `paused`). */
  readonly status?: string;
  readonly agentId?: string;
  readonly runId?: string;
  readonly parentRunId?: string;
  /** Runs of a goal loop's iterations: the goal they belong to (they hang under it, not their agent). */
  readonly goalId?: string;
  /** Approvals: the tool's name, never its arguments. */
  readonly tool?: string;
  readonly budgets?: Readonly<Record<string, BudgetUse>>;
}

/** A node of the tree: agents → goals and runs → (a goal's iteration runs) → sub-agent runs and approvals. */
export interface ActorNode extends ActorFields {
  readonly children: ActorNode[];
}

/** The whole tree and the sequence number of the last change applied to it. */
export interface ActorTreeSnapshot {
  readonly seq: number;
  readonly actors: ActorNode[];
}

/** The change types of the live feed. */
export const ACTOR_EVENT_TYPES = ['actor.created', 'actor.state', 'actor.stopped'] as const;
export type ActorEventType = (typeof ACTOR_EVENT_TYPES)[number];

/**
 * One change of the tree. `actor` is the node after the change (before it, for `actor.stopped`)
 * with the id of its parent in the tree. `cause` (optional) is the type of the event that made
 * the change, by type only (never its payload).
 */
export interface ActorEvent {
  readonly type: ActorEventType;
  readonly seq: number;
  readonly actor: ActorFields & { readonly parentId: string | null };
  readonly cause?: string;
}

/** Whether a value is an `actor.*` event (the sidecar's feeds carry them beside the run events). */
export function isActorEvent(value: { readonly type: string }): value is ActorEvent {
  return (ACTOR_EVENT_TYPES as readonly string[]).includes(value.type);
}
