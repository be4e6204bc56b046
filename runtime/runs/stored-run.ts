import type { Snapshot } from 'xstate';
import type { RunContext, RunOutcome } from '../../machines/run/types.ts';

/**
 * The one reader of a stored run's actor snapshot (the opaque `snapshot` of a run envelope,
 * store/snapshots/format.ts): what the runtime and its read models take from it. The envelope
 * is validated by the store; the XState snapshot inside is the run machine's persisted snapshot,
 * read here and nowhere else.
 */
export interface StoredRunState {
  /** The run machine's context, or null when the snapshot holds none. */
  readonly context: RunContext | null;
  /** The machine's state value (a string, or an object for a nested state), null when absent. */
  readonly value: unknown;
}

/** The stored actor snapshot of a run envelope (or anything holding one). */
export interface HoldsRunSnapshot {
  readonly snapshot: Readonly<Record<string, unknown>>;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads a stored run's context and state value. */
export function readStoredRun(stored: HoldsRunSnapshot): StoredRunState {
  const { context, value } = stored.snapshot;
  return { context: isRecord(context) ? (context as unknown as RunContext) : null, value: value ?? null };
}

/** A stored run's context, or null (no run stored, or a snapshot without one). */
export function storedContext(stored: HoldsRunSnapshot | null | undefined): RunContext | null {
  return stored == null ? null : readStoredRun(stored).context;
}

/** A stored run's outcome, or null while it has none. */
export function storedOutcome(stored: HoldsRunSnapshot | null | undefined): RunOutcome | null {
  return storedContext(stored)?.outcome ?? null;
}

/** A stored run as the run host restores it: its input and the actor snapshot XState restores. */
export interface RestorableRun {
  /** The stored context (a run's context holds its input). */
  readonly input: RunContext;
  /** The run machine's persisted snapshot, as stored. */
  readonly snapshot: Snapshot<unknown>;
}

const ACTOR_STATUSES: ReadonlySet<unknown> = new Set(['active', 'done', 'error', 'stopped']);

function isActorSnapshot(v: Readonly<Record<string, unknown>>): v is Snapshot<unknown> {
  return ACTOR_STATUSES.has(v['status']);
}

/**
 * Reads a stored run for restoring. Throws, naming the run, when its actor snapshot has no run
 * context or no XState status: such a row was not written by the run host.
 */
export function restorableRun(runId: string, stored: HoldsRunSnapshot): RestorableRun {
  const { context } = readStoredRun(stored);
  const snapshot = stored.snapshot;
  if (context === null) throw new Error(`stored run ${runId}: its actor snapshot holds no run context`);
  if (!isActorSnapshot(snapshot))
    throw new Error(
      `stored run ${runId}: its actor snapshot has no XState status (active, done, error or stopped)`,
    );
  return { input: context, snapshot };
}
