import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileWorkerPool } from '../../actors/tools/search/pool.ts';
import { createSearchFilesExecutor, type SearchFilesResult } from '../../actors/tools/search/search-files.ts';
import { ToolError } from '../../actors/tools/types.ts';
import { createTestWorkspace, type TestWorkspace } from './support.ts';

const DIRS = 200;
const FILES_PER_DIR = 100;
const TOTAL = DIRS * FILES_PER_DIR;

let ws: TestWorkspace;
let pool: FileWorkerPool;

beforeAll(() => {
  ws = createTestWorkspace();
  pool = new FileWorkerPool({ maxQueue: 16 });
  const tree = join(ws.root, 'tree');
  for (let d = 0; d < DIRS; d++) {
    const dir = join(tree, `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const n = d * FILES_PER_DIR + f;
      const body =
        n % 100 === 0 ? `first line\nhere is NEEDLE-${n}\nlast\n` : `first line\nnothing ${n}\nlast\n`;
      writeFileSync(join(dir, `f${f}.txt`), body);
    }
  }
  mkdirSync(join(ws.root, 'small'));
  writeFileSync(join(ws.root, 'small', 'a.txt'), 'alpha NEEDLE\nbeta\n');
  mkdirSync(join(ws.root, 'small', 'private'));
  writeFileSync(join(ws.root, 'small', 'private', 'p.txt'), 'NEEDLE in a denied place\n');
  writeFileSync(join(ws.outside, 'o.txt'), 'NEEDLE outside\n');
  symlinkSync(ws.outside, join(ws.root, 'small', 'link-out'));
  writeFileSync(join(ws.root, 'evil.txt'), `${'a'.repeat(40)}b\n`);
}, 60_000);

afterAll(async () => {
  await pool.close();
  ws.cleanup();
});

function search(
  args: { path: string; pattern: string },
  options: Partial<Parameters<typeof createSearchFilesExecutor>[0]> = {},
) {
  // The wall-clock budget is tested on its own; elsewhere a loaded machine must not cut a scan short.
  const executor = createSearchFilesExecutor({ pool, timeBudgetMs: LOADED_BUDGET_MS, ...options });
  return executor.execute(args, ws.context(ws.decide('search_files', args))) as Promise<SearchFilesResult>;
}

/** A budget no scan here reaches, even on a loaded machine (the default, 10 s, was reached there). */
const LOADED_BUDGET_MS = 10 * 60_000;

describe('search_files', () => {
  it('searches a 20k-file tree in the pool while the event loop stays free to run other work', async () => {
    // The decision is made (and the path guard warmed) by the policy before execution starts.
    const args = { path: 'tree', pattern: 'NEEDLE-\\d+' };
    const ctx = ws.context(ws.decide('search_files', args));
    const executor = createSearchFilesExecutor({ pool, maxMatches: 1000, timeBudgetMs: LOADED_BUDGET_MS });
    // Timer ticks of the main thread that ran while the scan was in the pool. A scan on the main
    // thread would block every timer until it returned, so none could see it pending. (Lag
    // figures belong to bench/, not to assertions that a loaded machine can break.)
    let ticksWhileScanning = 0;
    const probe = setInterval(() => {
      if (pool.pending > 0) ticksWhileScanning++;
    }, 2);
    const result = (await executor.execute(args, ctx)) as SearchFilesResult;
    clearInterval(probe);
    expect(result.filesScanned).toBe(TOTAL);
    expect(result.matches).toHaveLength(TOTAL / 100);
    expect(result.truncated).toBeNull();
    expect(ticksWhileScanning).toBeGreaterThan(0);
  });

  it('stops at the file cap', async () => {
    const result = await search({ path: 'tree', pattern: 'NEEDLE' }, { maxFiles: 5000, maxMatches: 10_000 });
    expect(result.filesScanned).toBe(5000);
    expect(result.truncated).toBe('file_cap');
  });

  it('stops at the match cap', async () => {
    const result = await search({ path: 'tree', pattern: 'NEEDLE' }, { maxMatches: 10 });
    expect(result.matches).toHaveLength(10);
    expect(result.truncated).toBe('match_cap');
  });

  it('never follows symlinks and drops matches in denied paths', async () => {
    ws.roots = ws.roots.map((r) => ({ ...r, deny: ['small/private'] }));
    try {
      const result = await search({ path: 'small', pattern: 'NEEDLE' });
      expect(result.matches).toEqual([{ file: 'a.txt', line: 1, text: 'alpha NEEDLE' }]);
      expect(result.skipped.symlinks).toBe(1);
    } finally {
      ws.roots = ws.roots.map((r) => ({ ...r, deny: undefined }));
    }
  });

  it('searches a single file', async () => {
    const result = await search({ path: 'small/a.txt', pattern: 'beta' });
    expect(result.matches).toEqual([{ file: '', line: 2, text: 'beta' }]);
  });

  it('refuses an invalid pattern', async () => {
    await expect(search({ path: 'small', pattern: '(' })).rejects.toMatchObject({ code: 'invalid_pattern' });
  });

  it('stops a catastrophic regular expression at its time budget with a clear error', async () => {
    // `(a+)+$` on this file backtracks for far longer than the test may take: an answer at all is the budget at work.
    const error = await search(
      { path: 'evil.txt', pattern: '(a+)+$' },
      { timeBudgetMs: 400, killGraceMs: 200 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('search_time_budget_exceeded');
    expect((error as ToolError).message).toMatch(/time budget of 400 ms/);
    // The pool recovered: a normal search works right after.
    expect((await search({ path: 'small/a.txt', pattern: 'alpha' })).matches).toHaveLength(1);
  });

  it('stops when the call is cancelled', async () => {
    const controller = new AbortController();
    const args = { path: 'evil.txt', pattern: '(a+)+$' };
    const ctx = ws.context(ws.decide('search_files', args), { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expect(createSearchFilesExecutor({ pool }).execute(args, ctx)).rejects.toMatchObject({
      code: 'cancelled',
    });
  });

  it('refuses work with pool_queue_full when the bounded queue is full', async () => {
    const tiny = new FileWorkerPool({ maxThreads: 1, maxQueue: 1 });
    const controller = new AbortController();
    const evil = {
      base: join(ws.root, 'evil.txt'),
      singleFile: true,
      dirs: [],
      files: [],
      pattern: '(a+)+$',
      flags: '',
      maxFiles: 1,
      maxMatches: 1,
      maxFileBytes: 1024,
      maxLineChars: 100,
      skipDirs: [],
      deadline: Date.now() + 60_000,
    };
    try {
      // Warm the single thread so the next task runs at once and the one after waits in the queue.
      await tiny.scan({ ...evil, pattern: 'x' });
      const running = [tiny.scan(evil, controller.signal), tiny.scan(evil, controller.signal)];
      for (const p of running) p.catch(() => {});
      await expect(tiny.scan(evil, controller.signal)).rejects.toMatchObject({ code: 'pool_queue_full' });
    } finally {
      controller.abort();
      await tiny.close();
    }
  });
});
