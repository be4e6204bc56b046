/**
 * Child processes (DESIGN.md §10): the supervisor, the sanitized environment, the lifeline and
 * process-group teardown.
 */
export { ProcessSupervisor } from './supervisor.ts';
export type { ProcessSupervisorOptions } from './supervisor.ts';
export type { ChildExit, ChildInfo, SpawnRequest, SupervisedChild } from './child.ts';
export { CappedBuffer, runToCompletion } from './run.ts';
export type { Spawner } from './run.ts';
export {
  buildChildEnv,
  isCredentialLikeName,
  isNeverSetName,
  POSIX_ENV_ALLOWLIST,
  WINDOWS_ENV_ALLOWLIST,
} from './env.ts';
export { groupAlive, killGroup, signalGroup } from './group.ts';
export { LIFELINE_ARGV0, LIFELINE_WRAPPER, lifelineArgs } from './lifeline.ts';
export { hasProcfs, isLiveState, liveGroupMembers, listProcesses, parseProcStat } from './procfs.ts';
export type { ProcStat } from './procfs.ts';
