/**
 * `search_files {path, pattern}`: a regular-expression search over a directory tree (or one
 * file), run in the worker pool in batches, with file, match and time caps.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import {
  nodeFs,
  openAtExecution,
  recheckAtExecution,
  type ExecFs,
  type SnotraPathGuard,
} from '../../../policy/paths/index.ts';
import { ToolErrorCode } from '../codes.ts';
import { pinDirectory } from '../fs/pinned-dir.ts';
import { decidedTarget, executionGuard, refusalError, throwIfCancelled } from '../paths.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import type { FileWorkerPool } from './pool.ts';
import type { ScanMatch, ScanResult, ScanTask, SkipCounts } from './protocol.ts';

/** Options and caps of `search_files`. */
export interface SearchFilesOptions {
  readonly pool: FileWorkerPool;
  /** Files scanned at most (default 50 000). */
  readonly maxFiles?: number;
  /** Matches returned at most (default 200). */
  readonly maxMatches?: number;
  /** Wall-clock budget (default 10 s); see `killGraceMs`. */
  readonly timeBudgetMs?: number;
  /** A task still running this long after the budget has its thread terminated (default 500 ms). */
  readonly killGraceMs?: number;
  /** Files per task (default 500). */
  readonly filesPerTask?: number;
  /** Directories handed to one task at most (default 64). */
  readonly dirsPerTask?: number;
  /** Files larger than this are skipped (default 2 MiB). */
  readonly maxFileBytes?: number;
  /** Matched lines are cut to this many characters (default 300). */
  readonly maxLineChars?: number;
  /** Directory names never entered (default `.git`). */
  readonly skipDirs?: readonly string[];
  /** Tasks in flight per search (default the pool's thread count). */
  readonly concurrency?: number;
  readonly execFs?: ExecFs;
}

/** Why a search returned fewer results than it might have. */
export const SearchStop = {
  fileCap: 'file_cap',
  matchCap: 'match_cap',
  timeBudget: 'time_budget',
} as const;
export type SearchStop = (typeof SearchStop)[keyof typeof SearchStop];

/** One match in the result; `file` is relative to the searched path. */
export interface SearchMatch {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** The result of `search_files`. */
export interface SearchFilesResult {
  readonly path: string;
  readonly pattern: string;
  readonly matches: readonly SearchMatch[];
  readonly filesScanned: number;
  readonly skipped: SkipCounts;
  /** Set when a cap stopped the search early. */
  readonly truncated: SearchStop | null;
  readonly durationMs: number;
}

interface Caps {
  readonly maxFiles: number;
  readonly maxMatches: number;
  readonly budgetMs: number;
  readonly killGraceMs: number;
  readonly filesPerTask: number;
  readonly dirsPerTask: number;
  readonly concurrency: number;
}

function compile(pattern: string): void {
  try {
    new RegExp(pattern);
  } catch {
    throw new ToolError(
      ToolErrorCode.invalidPattern,
      'the pattern is not a valid JavaScript regular expression',
    );
  }
}

/**
 * Creates the `search_files` executor. Guarantees: the path is re-checked at execution and the
 * walk starts from the pinned directory (or verified file descriptor); symlinks are never
 * followed; every returned match is in a file that the path guard, checked again on the main
 * thread, still resolves to exactly that path inside a readable root; at most `maxFiles` files
 * are scanned and `maxMatches` matches returned (`truncated` says which cap stopped it); at the
 * time budget, tasks stop between files and the partial result says `time_budget`, while a task
 * still running `killGraceMs` later (stuck in a catastrophic regular expression) has its thread
 * terminated and the call fails with `search_time_budget_exceeded`; `ctx.signal` ends the search
 * the same way with `cancelled`; the event loop only schedules tasks, merges their results and
 * confirms matches in slices of a few milliseconds.
 */
export function createSearchFilesExecutor(options: SearchFilesOptions): ToolExecutor {
  const caps: Caps = {
    maxFiles: options.maxFiles ?? 50_000,
    maxMatches: options.maxMatches ?? 200,
    budgetMs: options.timeBudgetMs ?? 10_000,
    killGraceMs: options.killGraceMs ?? 500,
    filesPerTask: options.filesPerTask ?? 500,
    dirsPerTask: options.dirsPerTask ?? 64,
    concurrency: options.concurrency ?? options.pool.maxThreads,
  };
  const execFs = options.execFs ?? nodeFs;
  const taskBase = {
    flags: '',
    maxFileBytes: options.maxFileBytes ?? 2 * 1024 * 1024,
    maxLineChars: options.maxLineChars ?? 300,
    skipDirs: options.skipDirs ?? ['.git'],
  };
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<SearchFilesResult> {
      const pattern = String(args.pattern);
      compile(pattern);
      throwIfCancelled(ctx.signal);
      const guard = executionGuard(ctx);
      const target = decidedTarget(ctx, 'path');
      const checked = recheckAtExecution(target, 'read', ctx.roots, guard);
      if (!checked.ok) throw refusalError(checked);
      const started = Date.now();
      const stats = fs.lstatSync(checked.path, { throwIfNoEntry: false });
      let base: string;
      let release: () => void;
      let singleFile = false;
      if (stats?.isDirectory() === true) {
        const dir = pinDirectory(checked.path);
        if (dir === null) throw new ToolError('invalid_path', 'refused at execution: the directory changed');
        base = dir.via;
        release = () => dir.close();
      } else {
        const opened = openAtExecution(target, 'read', ctx.roots, guard, execFs);
        if (!opened.ok) throw refusalError(opened);
        base = process.platform === 'linux' ? `/proc/self/fd/${opened.fd}` : opened.path;
        release = () => execFs.close(opened.fd);
        singleFile = true;
      }
      try {
        const again = recheckAtExecution(target, 'read', ctx.roots, guard);
        if (!again.ok) throw refusalError(again);
        const template = { ...taskBase, base, singleFile, pattern, deadline: started + caps.budgetMs };
        const run = await orchestrate(options.pool, template, caps, ctx.signal);
        const matches = await confirmMatches(run.matches, checked.path, singleFile, guard, ctx);
        return {
          path: checked.path,
          pattern,
          matches,
          filesScanned: run.filesScanned,
          skipped: run.skipped,
          truncated: run.stop,
          durationMs: Date.now() - started,
        };
      } finally {
        release();
      }
    },
  };
}

/** Main-thread work between two yields to the event loop. */
const YIELD_AFTER_MS = 4;

type TaskTemplate = Omit<ScanTask, 'dirs' | 'files' | 'maxFiles' | 'maxMatches'>;

interface RunOutcome {
  matches: ScanMatch[];
  filesScanned: number;
  skipped: SkipCounts;
  stop: SearchStop | null;
}

function addSkips(a: SkipCounts, b: SkipCounts): SkipCounts {
  return {
    large: a.large + b.large,
    binary: a.binary + b.binary,
    unreadable: a.unreadable + b.unreadable,
    symlinks: a.symlinks + b.symlinks,
    other: a.other + b.other,
  };
}

function appendAll<T>(into: T[], from: readonly T[]): void {
  for (const item of from) into.push(item);
}

async function orchestrate(
  pool: FileWorkerPool,
  template: TaskTemplate,
  caps: Caps,
  callSignal: AbortSignal,
): Promise<RunOutcome> {
  const controller = new AbortController();
  const budgetError = new ToolError(
    ToolErrorCode.searchTimeBudget,
    `the search was stopped at its time budget of ${caps.budgetMs} ms (a pattern with nested quantifiers can take exponential time on some lines)`,
  );
  const hardStop = setTimeout(() => controller.abort(budgetError), caps.budgetMs + caps.killGraceMs);
  const onCancel = (): void =>
    controller.abort(new ToolError(ToolErrorCode.cancelled, 'the call was cancelled'));
  callSignal.addEventListener('abort', onCancel, { once: true });

  const pendingDirs: string[] = template.singleFile ? [] : [''];
  const pendingFiles: string[] = [];
  const out: RunOutcome = {
    matches: [],
    filesScanned: 0,
    skipped: { large: 0, binary: 0, unreadable: 0, symlinks: 0, other: 0 },
    stop: null,
  };
  let reserved = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: unknown = null;
  let singleFileTaken = false;

  const merge = (result: ScanResult): void => {
    out.filesScanned += result.filesScanned;
    out.skipped = addSkips(out.skipped, result.skipped);
    for (const m of result.matches) if (out.matches.length < caps.maxMatches) out.matches.push(m);
    appendAll(pendingDirs, result.pendingDirs);
    appendAll(pendingFiles, result.pendingFiles);
    if (out.stop === null && out.matches.length >= caps.maxMatches) out.stop = SearchStop.matchCap;
    if (out.stop === null && result.stoppedBy === 'deadline') out.stop = SearchStop.timeBudget;
  };
  const hasWork = (): boolean =>
    template.singleFile ? !singleFileTaken : pendingFiles.length > 0 || pendingDirs.length > 0;

  try {
    for (;;) {
      while (out.stop === null && failure === null && inFlight.size < caps.concurrency && hasWork()) {
        const room = caps.maxFiles - out.filesScanned - reserved;
        if (room <= 0) break;
        const limit = Math.min(caps.filesPerTask, room);
        const files = pendingFiles.splice(Math.max(0, pendingFiles.length - caps.filesPerTask));
        const dirs =
          files.length < caps.filesPerTask
            ? pendingDirs.splice(Math.max(0, pendingDirs.length - caps.dirsPerTask))
            : [];
        singleFileTaken = true;
        const task: ScanTask = {
          ...template,
          dirs,
          files,
          maxFiles: limit,
          maxMatches: caps.maxMatches - out.matches.length,
        };
        reserved += limit;
        const running: Promise<void> = pool
          .scan(task, controller.signal)
          .then(merge, (error: unknown) => {
            if (out.stop === null && failure === null) failure = error;
          })
          .finally(() => {
            reserved -= limit;
            inFlight.delete(running);
          });
        inFlight.add(running);
      }
      if (inFlight.size === 0) break;
      await Promise.race(inFlight);
      if (failure !== null) break;
    }
    if (failure !== null) {
      if (!controller.signal.aborted) controller.abort(failure);
      throw controller.signal.reason instanceof ToolError ? controller.signal.reason : failure;
    }
    if (out.stop === null && hasWork()) out.stop = SearchStop.fileCap;
    if (inFlight.size > 0) {
      // Stopped at a cap with tasks still running: give them a moment, then end their threads.
      await Promise.race([Promise.allSettled([...inFlight]), delay(250)]);
      if (inFlight.size > 0) controller.abort(new Error('stopped at a cap'));
      await Promise.allSettled([...inFlight]);
    }
    return out;
  } finally {
    clearTimeout(hardStop);
    callSignal.removeEventListener('abort', onCancel);
  }
}

/**
 * Keeps only matches in files the path guard still resolves to exactly that path inside a
 * readable root (no sensitive path, no deny glob, no symlink on the way). Yields to the event
 * loop every few milliseconds.
 */
async function confirmMatches(
  matches: readonly ScanMatch[],
  start: string,
  singleFile: boolean,
  guard: SnotraPathGuard,
  ctx: ToolExecutionContext,
): Promise<SearchMatch[]> {
  const verdict = new Map<string, boolean>();
  const kept: SearchMatch[] = [];
  let sliceStart = performance.now();
  const sorted = [...matches].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  for (const m of sorted) {
    const absolute = singleFile ? start : join(start, m.file);
    let ok = verdict.get(absolute);
    if (ok === undefined) {
      const now = guard.resolve('path', absolute, 'read', ctx.roots);
      ok = now.ok && now.target.resolved === absolute;
      verdict.set(absolute, ok);
      if (performance.now() - sliceStart > YIELD_AFTER_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
    if (ok) kept.push({ file: singleFile ? '' : m.file, line: m.line, text: m.text });
  }
  return kept;
}
