/**
 * A rewind asked of a running runtime (the sidecar, the chat, a `snotra rewind` that joined it):
 * the same diff, restore, undo checkpoint and `rewind` audit event as the CLI's, behind the
 * rewind lock — a rewind is refused while a live run of this runtime can write a root the
 * checkpoint covers (the run would write over the restore, or the restore under its command).
 */
import { realpathSync } from 'node:fs';
import { sep } from 'node:path';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type { RunStatus, Store } from '../../store/index.ts';
import {
  Checkpointer,
  CheckpointNotFoundError,
  listCheckpoints,
  rewindTo,
  type CheckpointFilter,
  type CheckpointSummary,
} from '../checkpoints/index.ts';
import {
  auditRewind,
  externalEffectsIn,
  RewindInClusterError,
  type RewindOutcome,
} from '../control/rewind.ts';

/** A live run as the rewind lock sees it. */
export interface LiveRunRoots {
  readonly runId: string;
  readonly status: RunStatus;
  readonly roots: readonly Pick<WorkspaceRoot, 'id' | 'path' | 'access'>[];
}

/** What {@link Rewinds} reads and writes. */
export interface RewindsDeps {
  readonly stateDir: string;
  readonly now: () => number;
  readonly store: Pick<Store, 'audit' | 'externalCalls'>;
  /** The runs with a live actor now, each with the roots its envelope holds. */
  readonly liveRuns: () => readonly LiveRunRoots[];
  /** This runtime's node id when it is a cluster node (a rewind is then refused), else null. */
  readonly clusterNode: string | null;
}

/** Who asks for a rewind: a human on an authenticated surface. */
export interface RewindRequest {
  readonly dryRun: boolean;
  /** The human, as the surface knows them (`sidecar:<user>`, `local:<user>`). */
  readonly user: string;
  /** The surface it came through (audited): `sidecar`, `chat`, `cli`. */
  readonly surface: string;
  /** Only a checkpoint of this run (or the undo checkpoint of a rewind of it); any other is not found. */
  readonly ofRun?: string;
}

/** A rewind refused because a live run can write a root the checkpoint covers. */
export class RewindBlockedError extends Error {
  readonly code = 'rewind_blocked_by_run';
  constructor(
    readonly runId: string,
    readonly status: RunStatus,
    readonly root: string,
  ) {
    const doing = status === 'waiting_for_approval' ? 'is waiting for a human' : `is ${status}`;
    super(
      `rewind refused: run ${runId} ${doing} and can write ${root}, which the checkpoint covers; wait for it to end (or cancel it) and rewind again`,
    );
    this.name = 'RewindBlockedError';
  }
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Whether one of two canonical paths is the other or inside it. */
function overlaps(a: string, b: string): boolean {
  const inside = (x: string, y: string) => x === y || x.startsWith(y.endsWith(sep) ? y : `${y}${sep}`);
  return inside(a, b) || inside(b, a);
}

/** The first live run that can write one of `paths`, with the root it shares; null for none. */
export function blockingRun(
  live: readonly LiveRunRoots[],
  paths: readonly string[],
): { runId: string; status: RunStatus; root: string } | null {
  const covered = paths.map(canonical);
  for (const run of live)
    for (const root of run.roots) {
      if (root.access !== 'read-write') continue;
      const path = canonical(root.path);
      const shared = covered.find((c) => overlaps(c, path));
      if (shared !== undefined) return { runId: run.runId, status: run.status, root: shared };
    }
  return null;
}

/** Listing checkpoints and rewinding to one inside a running runtime. */
export class Rewinds {
  readonly #deps: RewindsDeps;

  constructor(deps: RewindsDeps) {
    this.#deps = deps;
  }

  /** The checkpoints matching `filter`, oldest first, each with the paths changed since. */
  list(filter: CheckpointFilter): CheckpointSummary[] {
    return listCheckpoints(this.#deps.stateDir, filter, this.#deps.now);
  }

  /**
   * Throws `RewindInClusterError` on a cluster node: a rewind (not a dry run) is refused there
   * before anything else is looked at (the run, the checkpoint), whatever this node's store holds.
   */
  refuseInCluster(): void {
    if (this.#deps.clusterNode !== null) throw new RewindInClusterError(this.#deps.clusterNode);
  }

  /**
   * Rewinds to checkpoint `id` (a dry run only says what would change, and is never locked).
   * Throws `RewindInClusterError` first on a cluster node (other nodes' runs are not visible),
   * `RewindBlockedError` while a live run can write a root the checkpoint covers, and the
   * checkpoint errors of `rewindTo` (`invalid_checkpoint_id`, `checkpoint_not_found`, …). The
   * restore runs synchronously: no call of this runtime starts between the check and its end.
   */
  rewind(id: string, request: RewindRequest): RewindOutcome {
    const { stateDir, now, store } = this.#deps;
    if (!request.dryRun) this.refuseInCluster();
    const record = new Checkpointer(stateDir, now).store.readRecord(id, 'rewind');
    if (request.ofRun !== undefined && record.runId !== request.ofRun)
      throw new CheckpointNotFoundError(`rewind: run ${request.ofRun} has no checkpoint ${id}`);
    if (!request.dryRun) {
      const blocked = blockingRun(
        this.#deps.liveRuns(),
        record.roots.map((r) => r.path),
      );
      if (blocked !== null) throw new RewindBlockedError(blocked.runId, blocked.status, blocked.root);
    }
    const report = rewindTo(stateDir, id, { dryRun: request.dryRun, now });
    const notRewindable = externalEffectsIn(store, report.checkpoint.at);
    if (!request.dryRun) auditRewind(store, report, request, notRewindable.length);
    return { ...report, notRewindable, user: request.user };
  }
}
