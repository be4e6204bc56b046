import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  CheckpointError,
  CheckpointFormatError,
  CheckpointNotFoundError,
  RestoreError,
  RewindBlockedError,
  RewindInClusterError,
} from '../../runtime/index.ts';
import { readJsonBody } from './body.ts';
import { SidecarError } from './errors.ts';
import { parse, reply, type RouteContext } from './route-context.ts';

/** `POST /v1/runs/:id/rewind`: the checkpoint (one of the run's), and whether only to see the diff. */
export const RewindBody = z.strictObject({
  checkpoint: z.string().min(1).max(200),
  dryRun: z.boolean(),
});

/** A checkpoint or restore error as the sidecar answers it; anything else unchanged. */
function rewindError(err: unknown): unknown {
  if (err instanceof RewindBlockedError || err instanceof RewindInClusterError)
    return new SidecarError(409, err.code, err.message);
  if (err instanceof CheckpointNotFoundError)
    return new SidecarError(404, 'checkpoint_not_found', err.message);
  if (err instanceof CheckpointFormatError) {
    const status = err.code === 'invalid_checkpoint_id' ? 400 : 500;
    return new SidecarError(status, err.code, err.message);
  }
  if (err instanceof RestoreError || err instanceof CheckpointError)
    return new SidecarError(409, err.code, err.message);
  return err;
}

/**
 * `GET /v1/runs/:id/checkpoints`: the run's checkpoints (one per call that could change a root,
 * and the undo checkpoint of each rewind of it), oldest first, each with the paths changed since.
 */
export function runCheckpoints(
  ctx: RouteContext,
  _req: IncomingMessage,
  res: ServerResponse,
  [id]: string[],
): void {
  const runId = id as string;
  if (ctx.runtime.read.run(runId) === null) throw new SidecarError(404, 'unknown_run', 'no such run');
  reply(ctx, res, 200, { checkpoints: ctx.runtime.runs.checkpoints({ runId }) });
}

/**
 * `POST /v1/runs/:id/rewind` `{checkpoint, dryRun}`: with `dryRun` the diff a rewind to one of
 * the run's checkpoints would make; without, the rewind itself (audited `rewind` as this
 * sidecar's user, undoable through `undo`). 404 `checkpoint_not_found` for a checkpoint that is
 * not the run's; 409 `rewind_blocked_by_run` while a live run can write a root it covers, and
 * 409 `rewind_in_cluster` on a cluster node, before anything else (a dry run is answered as elsewhere).
 */
export async function rewindRun(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  [id]: string[],
): Promise<void> {
  const body = parse(RewindBody, await readJsonBody(req, ctx.bodyBytes));
  const runId = id as string;
  // On a cluster node every rewind is refused, whether or not this node's store holds the run.
  if (!body.dryRun) {
    try {
      ctx.runtime.runs.refuseRewindInCluster();
    } catch (err) {
      throw rewindError(err);
    }
  }
  if (ctx.runtime.read.run(runId) === null) throw new SidecarError(404, 'unknown_run', 'no such run');
  try {
    const outcome = ctx.runtime.runs.rewind(body.checkpoint, {
      dryRun: body.dryRun,
      user: ctx.user,
      surface: 'sidecar',
      ofRun: runId,
    });
    reply(ctx, res, 200, { rewind: outcome });
  } catch (err) {
    throw rewindError(err);
  }
}
