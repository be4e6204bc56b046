/**
 * Checkpoints and rewind (issue 38): a content-addressed snapshot of the read-write roots a call
 * can change, taken before it runs, and the human's rewind to one.
 */
export { Checkpointer, CheckpointError } from './checkpointer.ts';
export type { CheckpointMeta, TakenCheckpoint } from './checkpointer.ts';
export { ChangeKind } from './diff.ts';
export type { Change } from './diff.ts';
export { MAX_CHECKPOINT_FILE_BYTES } from './exclusion.ts';
export { CheckpointFormatError, isCheckpointId } from './format.ts';
export type { CheckpointRecord, ExclusionReason } from './format.ts';
export { CHECKPOINTS_DIR, CheckpointNotFoundError } from './objects.ts';
export { RestoreError } from './restore.ts';
export { CHECKPOINT_RETENTION, pruneCheckpoints } from './retention.ts';
export type { PruneResult } from './retention.ts';
export { listCheckpoints, rewindTo } from './rewind.ts';
export type { CheckpointFilter, CheckpointSummary, RewindReport } from './rewind.ts';
export { mayChangeRoots, rootsToCheckpoint } from './scope.ts';
