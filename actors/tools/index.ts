/**
 * Built-in tool executors, the observation builder, and the seams they are injected with
 * (process runner, platform adapter, worker pool).
 */
export { createBuiltinExecutors } from './executors.ts';
export type { BuiltinExecutorName, BuiltinExecutorOptions } from './executors.ts';
export { ToolErrorCode } from './codes.ts';
export { DEFAULT_OBSERVATION_BYTES, errorPayload, toObservation } from './observation.ts';
export type { Observation, ObservationOptions, ObservationRedactor, ToolOutcome } from './observation.ts';
export { EnvSource, ProcessRunError, ProcessRunErrorCode } from './process-runner.ts';
export type { ChildEnvEntry, ProcessRunner, ProcessRunRequest, ProcessRunResult } from './process-runner.ts';
export type { PlatformAdapter, PlatformSendOptions, PlatformSendResult } from './platform.ts';
export { FileWorkerPool } from './search/pool.ts';
export type { FileWorkerPoolOptions } from './search/pool.ts';
export { createSearchFilesExecutor, SearchStop } from './search/search-files.ts';
export type { SearchFilesOptions, SearchFilesResult, SearchMatch } from './search/search-files.ts';
export type { ScanMatch, ScanResult, ScanTask, SkipCounts } from './search/protocol.ts';
export { createReadFileExecutor } from './fs/read-file.ts';
export type { ReadFileOptions, ReadFileResult } from './fs/read-file.ts';
export { createListDirExecutor } from './fs/list-dir.ts';
export type { DirEntry, ListDirOptions, ListDirResult } from './fs/list-dir.ts';
export { createWriteFileExecutor } from './fs/write-file.ts';
export type { WriteFileOptions } from './fs/write-file.ts';
export { createEditFileExecutor } from './fs/edit-file.ts';
export type { EditFileOptions, EditFileResult } from './fs/edit-file.ts';
export { atomicWriteAtExecution, stampOf } from './fs/atomic-write.ts';
export type { AtomicWriteOptions, AtomicWriteResult, FileStamp } from './fs/atomic-write.ts';
export { pinDirectory } from './fs/pinned-dir.ts';
export type { PinnedDirectory } from './fs/pinned-dir.ts';
export { createShellExecutor, runChecked } from './shell.ts';
export type { ShellOptions, ShellResult } from './shell.ts';
export { createGitQueryExecutor, gitEnv } from './git/git-query.ts';
export type { GitQueryOptions, GitQueryResult } from './git/git-query.ts';
export {
  checkGitArgs,
  GIT_GLOBAL_OPTIONS,
  GIT_QUERY_SUBCOMMANDS,
  REFUSED_LONG_OPTIONS,
  REFUSED_SHORT_OPTIONS,
} from './git/git-args.ts';
export type { GitArgsVerdict } from './git/git-args.ts';
export { createHttpRequestExecutor } from './http/http-request.ts';
export type { HttpRequestOptions, HttpResponseResult, InjectedCredential } from './http/http-request.ts';
export { checkTarget, parseRequestUrl } from './http/target.ts';
export type { CheckedTarget, Resolver, TargetPolicy } from './http/target.ts';
export { isPublicAddress, parseIPv4, parseIPv6 } from './http/address.ts';
export { createSendMessageExecutor } from './send-message.ts';
export type { SendMessageResult } from './send-message.ts';
export { createDirectoryAccessExecutor } from './directory-access.ts';
export type { DirectoryAccessRequest } from './directory-access.ts';
export { resolveConfiguredEnv } from './env-config.ts';
export type { ConfiguredEnvValue } from './env-config.ts';
export { decidedTarget, executionGuard, isSnotraPathGuard } from './paths.ts';
export { workingDirectory } from './working-dir.ts';
