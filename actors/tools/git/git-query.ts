/** `git_query {args}`: read-only git (`log`, `status`, `diff`, `show`) in the primary root. */
import { dirname } from 'node:path';
import { ToolErrorCode } from '../codes.ts';
import { throwIfCancelled } from '../paths.ts';
import type { ChildEnvEntry, ProcessRunner } from '../process-runner.ts';
import { confinementFor, runChecked } from '../shell.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import { workingDirectory } from '../working-dir.ts';
import { checkGitArgs, GIT_GLOBAL_OPTIONS, subcommandSafetyOptions } from './git-args.ts';

/** Options of the `git_query` executor. */
export interface GitQueryOptions {
  readonly runner: ProcessRunner;
  /** The git program (default `git` on the allowlisted PATH). */
  readonly git?: string;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
}

/** What `git_query` returns. */
export interface GitQueryResult {
  readonly stdout: string;
  readonly truncated: boolean;
}

/**
 * The variables git runs with (besides the allowlist): no system or global config (so neither
 * can name an external diff, a textconv or a pager), no prompts, no optional locks (`status`
 * does not write the index), no pager, and no repository discovery above the root.
 */
export function gitEnv(cwd: string): ChildEnvEntry[] {
  const fixed: Record<string, string> = {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_CEILING_DIRECTORIES: dirname(cwd),
  };
  return Object.entries(fixed).map(([name, value]) => ({ name, value, source: 'config' as const }));
}

/**
 * Creates the `git_query` executor. Guarantees: arguments pass `checkGitArgs` or the call fails
 * with `git_subcommand_refused` / `git_option_refused` before anything runs; git runs in the
 * current primary root with `gitEnv`, the global safety options and, for diff-producing
 * subcommands, `--no-ext-diff --no-textconv`, inside the runner's OS sandbox when it has one
 * (the run's roots, no network); a non-zero exit is `git_failed` with stderr as
 * details.
 */
export function createGitQueryExecutor(options: GitQueryOptions): ToolExecutor {
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<GitQueryResult> {
      const gitArgs = Array.isArray(args.args) ? args.args.map(String) : [];
      const verdict = checkGitArgs(gitArgs);
      if (verdict !== null) throw new ToolError(verdict.code, verdict.message);
      throwIfCancelled(ctx.signal);
      const cwd = workingDirectory(ctx, 'cwd', false);
      const [sub = '', ...rest] = gitArgs;
      const run = await runChecked(options.runner, {
        command: options.git ?? 'git',
        args: [...GIT_GLOBAL_OPTIONS, sub, ...subcommandSafetyOptions(sub), ...rest],
        cwd,
        env: gitEnv(cwd),
        timeoutMs: options.timeoutMs ?? 30_000,
        maxOutputBytes: options.maxOutputBytes ?? 1024 * 1024,
        signal: ctx.signal,
        // Read-only git in the run's sandbox (no network: git_query never fetches).
        confine: { ...confinementFor(ctx), network: false },
      });
      if (run.cancelled) throw new ToolError(ToolErrorCode.cancelled, 'the call was cancelled');
      if (run.timedOut) throw new ToolError(ToolErrorCode.commandTimeout, 'git ran past its time limit');
      if (run.exitCode !== 0) {
        throw new ToolError(ToolErrorCode.gitFailed, `git exited with code ${run.exitCode ?? 'none'}`, {
          details: { stderr: run.stderr, truncated: run.truncated },
        });
      }
      return { stdout: run.stdout, truncated: run.truncated };
    },
  };
}
