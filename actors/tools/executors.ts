/**
 * The built-in tool executors of DESIGN.md §12 (all but `spawn_agent`, which the sub-agent
 * spawner provides), wired from one options object.
 */
import type { BuiltinToolName } from '../../policy/builtins.ts';
import { ToolErrorCode } from './codes.ts';
import { createDirectoryAccessExecutor } from './directory-access.ts';
import { createEditFileExecutor, type EditFileOptions } from './fs/edit-file.ts';
import { createListDirExecutor, type ListDirOptions } from './fs/list-dir.ts';
import { createReadFileExecutor, type ReadFileOptions } from './fs/read-file.ts';
import { createWriteFileExecutor, type WriteFileOptions } from './fs/write-file.ts';
import { createGitQueryExecutor, type GitQueryOptions } from './git/git-query.ts';
import { createHttpRequestExecutor, type HttpRequestOptions } from './http/http-request.ts';
import type { PlatformAdapter } from './platform.ts';
import type { ProcessRunner } from './process-runner.ts';
import type { FileWorkerPool } from './search/pool.ts';
import { createSearchFilesExecutor, type SearchFilesOptions } from './search/search-files.ts';
import { createSendMessageExecutor } from './send-message.ts';
import { createShellExecutor, type ShellOptions } from './shell.ts';
import { ToolError, type ToolExecutor } from './types.ts';

/** Names of the built-in tools this module executes. */
export type BuiltinExecutorName = Exclude<BuiltinToolName, 'spawn_agent'>;

/** Everything the built-in executors need, with per-tool limits. */
export interface BuiltinExecutorOptions {
  /** The worker pool `search_files` and `read_file` run in (owned and closed by the caller). */
  readonly pool: FileWorkerPool;
  /** Starts child processes for `shell` and `git_query` (the runtime's process supervisor). */
  readonly runner?: ProcessRunner;
  /** The messaging platform behind `send_message`. */
  readonly platform?: PlatformAdapter;
  /** `read_file` limits; it reads through `pool` unless `pool: undefined` is given here. */
  readonly readFile?: ReadFileOptions;
  readonly listDir?: ListDirOptions;
  readonly search?: Omit<SearchFilesOptions, 'pool'>;
  readonly writeFile?: WriteFileOptions;
  readonly editFile?: EditFileOptions;
  readonly shell?: Omit<ShellOptions, 'runner'>;
  readonly git?: Omit<GitQueryOptions, 'runner'>;
  readonly http?: HttpRequestOptions;
}

function missingRunner(tool: string): ToolExecutor {
  return {
    execute: () =>
      Promise.reject(
        new ToolError(
          ToolErrorCode.processRunnerMissing,
          `${tool} needs a process runner, and none is configured`,
        ),
      ),
  };
}

/**
 * Creates one executor per built-in tool. Guarantees: every executor re-checks its paths at
 * execution through the context's path guard; `shell` and `git_query` fail with
 * `process_runner_missing` when no runner is given, `send_message` with `platform_unavailable`
 * when no platform is; nothing here adds roots or applies approvals.
 */
export function createBuiltinExecutors(
  options: BuiltinExecutorOptions,
): Record<BuiltinExecutorName, ToolExecutor> {
  const runner = options.runner;
  return {
    read_file: createReadFileExecutor({ pool: options.pool, ...options.readFile }),
    list_dir: createListDirExecutor(options.listDir),
    search_files: createSearchFilesExecutor({ ...options.search, pool: options.pool }),
    write_file: createWriteFileExecutor(options.writeFile),
    edit_file: createEditFileExecutor(options.editFile),
    shell: runner === undefined ? missingRunner('shell') : createShellExecutor({ ...options.shell, runner }),
    git_query:
      runner === undefined ? missingRunner('git_query') : createGitQueryExecutor({ ...options.git, runner }),
    http_request: createHttpRequestExecutor(options.http),
    send_message: createSendMessageExecutor(options.platform),
    request_directory_access: createDirectoryAccessExecutor(),
  };
}
