// read_file through the file worker pool against the main-thread path: same results, caps and
// errors; and the pool path keeps the execution-time guarantees (re-check on the main thread,
// O_NOFOLLOW and inode verification in the worker).
import {
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../support/runtime.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinExecutors } from '../../actors/tools/executors.ts';
import { createReadFileExecutor, type ReadFileOptions } from '../../actors/tools/fs/read-file.ts';
import { FileWorkerPool } from '../../actors/tools/search/pool.ts';
import { ToolError, type ToolExecutionContext } from '../../actors/tools/types.ts';
import type { Decision } from '../../policy/decision.ts';
import { nodeFs, type ExecFs, type SnotraPathGuard } from '../../policy/paths/index.ts';
import { createTestWorkspace, type TestWorkspace } from './support.ts';

let ws: TestWorkspace;
let pool: FileWorkerPool;

beforeAll(() => {
  ws = createTestWorkspace();
  pool = new FileWorkerPool({ maxThreads: 2, maxReadBatch: 8 });
  const w = (name: string, data: string | Buffer): void => writeFileSync(join(ws.root, name), data);
  w('empty.txt', '');
  w('one.txt', 'only line');
  w('lines.txt', 'one\ntwo\nthree\nfour\n');
  w('crlf.txt', 'a\r\nb\r\nc\r\n');
  w('blank-lines.txt', '\n\n\nx\n\n');
  // Multi-byte characters straddling the 64 KiB read boundaries.
  w('utf8.txt', Array.from({ length: 3000 }, (_, i) => `${i} äöü €𝄞 ${'é'.repeat(i % 37)}`).join('\n'));
  w('big.txt', Array.from({ length: 7000 }, (_, i) => `line ${i + 1} of a long file`).join('\n'));
  w('long-line.txt', `${'x'.repeat(200_000)}\nafter\n`);
  w('binary.bin', Buffer.from([0x41, 0x00, 0x42, 0x0a]));
  w('late-nul.txt', Buffer.concat([Buffer.from('a\n'.repeat(5000)), Buffer.from([0]), Buffer.from('\nz\n')]));
  mkdirSync(join(ws.root, 'dir'));
  mkdirSync(join(ws.root, 'many'));
  for (let i = 0; i < 100; i++) writeFileSync(join(ws.root, 'many', `f${i}.txt`), `file ${i}\nsecond ${i}\n`);
});

afterAll(async () => {
  await pool.close();
  ws.cleanup();
});

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; message: string; details: unknown };

async function outcome(promise: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return { ok: false, code: error.code, message: error.message, details: error.details };
  }
}

function both(options: ReadFileOptions = {}) {
  return {
    main: createReadFileExecutor(options),
    pooled: createReadFileExecutor({ ...options, pool }),
  };
}

/** Runs `args` through both executors with one decision made before either runs. */
async function compare(
  args: Record<string, unknown>,
  options: ReadFileOptions = {},
): Promise<{ main: Outcome; pooled: Outcome }> {
  const { main, pooled } = both(options);
  const decision = ws.decide('read_file', args);
  return {
    main: await outcome(main.execute(args, ws.context(decision))),
    pooled: await outcome(pooled.execute(args, ws.context(decision))),
  };
}

describe('read_file through the pool vs the main thread', () => {
  const cases: [string, Record<string, unknown>, ReadFileOptions][] = [
    ['empty file', { path: 'empty.txt' }, {}],
    ['one line without a newline', { path: 'one.txt' }, {}],
    ['a range', { path: 'lines.txt', startLine: 2, endLine: 3 }, {}],
    ['from a line to the end', { path: 'lines.txt', startLine: 3 }, {}],
    ['a range past the end', { path: 'lines.txt', startLine: 9, endLine: 12 }, {}],
    ['a range running past the end', { path: 'lines.txt', startLine: 4, endLine: 40 }, {}],
    ['CRLF kept as is', { path: 'crlf.txt' }, {}],
    ['blank lines', { path: 'blank-lines.txt', startLine: 2, endLine: 5 }, {}],
    ['multi-byte text across read boundaries', { path: 'utf8.txt' }, { maxBytes: 1 << 20 }],
    ['multi-byte range deep in the file', { path: 'utf8.txt', startLine: 2500, endLine: 2600 }, {}],
    ['100 lines of a ~180 KiB file', { path: 'big.txt', startLine: 3000, endLine: 3099 }, {}],
    ['content cap', { path: 'big.txt' }, { maxBytes: 1000 }],
    ['content cap inside a multi-byte file', { path: 'utf8.txt', startLine: 10 }, { maxBytes: 777 }],
    ['scan cap', { path: 'big.txt', startLine: 6000 }, { maxScanBytes: 100 * 1024 }],
    ['scan cap smaller than one chunk', { path: 'big.txt' }, { maxScanBytes: 50 }],
    ['scan cap of zero', { path: 'lines.txt' }, { maxScanBytes: 0 }],
    ['a line longer than the content cap', { path: 'long-line.txt' }, { maxBytes: 1000 }],
    ['a line longer than the scan cap', { path: 'long-line.txt', startLine: 2 }, { maxScanBytes: 70_000 }],
    ['binary file', { path: 'binary.bin' }, {}],
    ['NUL byte after the first 8 KiB is text', { path: 'late-nul.txt', startLine: 5000 }, {}],
    ['a directory', { path: 'dir' }, {}],
    ['a missing file', { path: 'missing.txt' }, {}],
    ['endLine before startLine', { path: 'lines.txt', startLine: 3, endLine: 2 }, {}],
  ];

  it.each(cases)('%s: identical outcome', async (_name, args, options) => {
    const { main, pooled } = await compare(args, options);
    expect(pooled).toEqual(main);
  });

  it('gives the expected results and errors (the comparison is not vacuous)', async () => {
    expect((await compare({ path: 'lines.txt', startLine: 2, endLine: 3 })).pooled).toEqual({
      ok: true,
      value: {
        path: join(ws.root, 'lines.txt'),
        content: 'two\nthree',
        startLine: 2,
        endLine: 3,
        totalLines: null,
        truncated: false,
      },
    });
    const range = (await compare({ path: 'big.txt', startLine: 3000, endLine: 3099 })).pooled;
    expect(range.ok && (range.value as { content: string }).content.split('\n')).toHaveLength(100);
    const capped = (await compare({ path: 'big.txt' }, { maxBytes: 1000 })).pooled;
    expect(capped).toMatchObject({ ok: true, value: { truncated: true, totalLines: null } });
    expect(Buffer.byteLength((capped as { value: { content: string } }).value.content)).toBeLessThanOrEqual(
      1000,
    );
    expect((await compare({ path: 'binary.bin' })).pooled).toMatchObject({ ok: false, code: 'binary_file' });
    expect((await compare({ path: 'dir' })).pooled).toMatchObject({
      ok: false,
      code: 'invalid_path',
      details: { rule: 'roots.not-a-regular-file' },
    });
    expect((await compare({ path: 'missing.txt' })).pooled).toMatchObject({
      ok: false,
      code: 'invalid_path',
      details: { rule: 'roots.io-failed' },
    });
  });

  it('refuses a leaf swapped for a symlink to outside before execution, on both paths', async () => {
    writeFileSync(join(ws.root, 'swap-before.txt'), 'inside');
    writeFileSync(join(ws.outside, 'secret-before.txt'), 'outside secret');
    const args = { path: 'swap-before.txt' };
    const decision = ws.decide('read_file', args);
    renameSync(join(ws.root, 'swap-before.txt'), join(ws.root, 'swap-before.old'));
    symlinkSync(join(ws.outside, 'secret-before.txt'), join(ws.root, 'swap-before.txt'));
    const { main, pooled } = both();
    const a = await outcome(main.execute(args, ws.context(decision)));
    const b = await outcome(pooled.execute(args, ws.context(decision)));
    expect(a).toMatchObject({ ok: false, code: 'outside_roots' });
    expect(b).toEqual(a);
  });

  it('reads many files concurrently in batches with the same results', async () => {
    const { main, pooled } = both();
    const calls = Array.from({ length: 100 }, (_, i) => {
      const args = { path: `many/f${i}.txt`, startLine: 2 };
      return { args, decision: ws.decide('read_file', args) };
    });
    const viaPool = await Promise.all(calls.map((c) => pooled.execute(c.args, ws.context(c.decision))));
    const viaMain = await Promise.all(calls.map((c) => main.execute(c.args, ws.context(c.decision))));
    expect(viaPool).toEqual(viaMain);
    expect(viaPool[42]).toMatchObject({ content: 'second 42', totalLines: 2 });
    expect(pool.pending).toBe(0);
  });

  it('fails a cancelled call with cancelled on both paths', async () => {
    const controller = new AbortController();
    controller.abort();
    const args = { path: 'lines.txt' };
    const ctx = ws.context(ws.decide('read_file', args), { signal: controller.signal });
    const { main, pooled } = both();
    expect(await outcome(main.execute(args, ctx))).toMatchObject({ ok: false, code: 'cancelled' });
    expect(await outcome(pooled.execute(args, ctx))).toMatchObject({ ok: false, code: 'cancelled' });
  });
});

/**
 * A context whose last main-thread re-check (the one `openAtExecution` makes after its verified
 * open) is followed at once by `swap`: the change lands after every main-thread check and
 * before the worker opens the path.
 */
function swapAfterLastCheck(
  decision: Decision,
  swap: () => void,
): { ctx: ToolExecutionContext; execFs: ExecFs; swapped: () => boolean } {
  let opened = false;
  let swapped = false;
  const execFs: ExecFs = {
    ...nodeFs,
    openNoFollow(path, mode) {
      opened = true;
      return nodeFs.openNoFollow(path, mode);
    },
  };
  const guard: SnotraPathGuard = {
    ...ws.guard,
    resolve(argument, input, access, roots) {
      const result = ws.guard.resolve(argument, input, access, roots);
      if (opened && !swapped) {
        swapped = true;
        swap();
      }
      return result;
    },
  };
  return { ctx: ws.context(decision, { paths: guard }), execFs, swapped: () => swapped };
}

describe('read_file through the pool: changes after the main thread decided', () => {
  it('refuses a leaf symlink swapped in after the last main-thread check (O_NOFOLLOW in the worker)', async () => {
    writeFileSync(join(ws.root, 'late.txt'), 'inside');
    writeFileSync(join(ws.outside, 'late-secret.txt'), 'outside secret');
    const args = { path: 'late.txt' };
    const swap = (): void => {
      renameSync(join(ws.root, 'late.txt'), join(ws.root, 'late.old'));
      symlinkSync(join(ws.outside, 'late-secret.txt'), join(ws.root, 'late.txt'));
    };
    const setup = swapAfterLastCheck(ws.decide('read_file', args), swap);
    const pooled = createReadFileExecutor({ pool, execFs: setup.execFs });
    const result = await outcome(pooled.execute(args, setup.ctx));
    expect(setup.swapped()).toBe(true);
    expect(result).toEqual({
      ok: false,
      code: 'invalid_path',
      message: 'refused at execution: the final component became a symlink',
      details: { rule: 'roots.open-mismatch' },
    });
  });

  it('the main-thread path, same swap: reads only the verified descriptor (the file decided on)', async () => {
    writeFileSync(join(ws.root, 'late-main.txt'), 'inside');
    writeFileSync(join(ws.outside, 'late-main-secret.txt'), 'outside secret');
    const args = { path: 'late-main.txt' };
    const setup = swapAfterLastCheck(ws.decide('read_file', args), () => {
      renameSync(join(ws.root, 'late-main.txt'), join(ws.root, 'late-main.old'));
      symlinkSync(join(ws.outside, 'late-main-secret.txt'), join(ws.root, 'late-main.txt'));
    });
    const main = createReadFileExecutor({ execFs: setup.execFs });
    expect(setup.swapped()).toBe(false);
    expect(await main.execute(args, setup.ctx)).toMatchObject({ content: 'inside' });
    expect(setup.swapped()).toBe(true);
  });

  it('refuses a leaf replaced by another regular file after the last main-thread check (inode check)', async () => {
    writeFileSync(join(ws.root, 'replaced.txt'), 'decided on');
    writeFileSync(join(ws.root, 'other.txt'), 'someone else');
    const args = { path: 'replaced.txt' };
    const setup = swapAfterLastCheck(ws.decide('read_file', args), () =>
      renameSync(join(ws.root, 'other.txt'), join(ws.root, 'replaced.txt')),
    );
    const pooled = createReadFileExecutor({ pool, execFs: setup.execFs });
    expect(await outcome(pooled.execute(args, setup.ctx))).toEqual({
      ok: false,
      code: 'invalid_path',
      message: 'refused at execution: the opened file is not the one at the checked path',
      details: { rule: 'roots.open-mismatch' },
    });
  });

  it('the worker refuses a leaf symlink even to the very file (same inode) it was asked for', async () => {
    writeFileSync(join(ws.root, 'target.txt'), 'target');
    symlinkSync(join(ws.root, 'target.txt'), join(ws.root, 'alias.txt'));
    const stats = statSync(join(ws.root, 'target.txt'), { bigint: true });
    const request = {
      dev: String(stats.dev),
      ino: String(stats.ino),
      startLine: 1,
      lastWanted: Number.POSITIVE_INFINITY,
      maxBytes: 1024,
      maxScan: 1024,
    };
    expect(await pool.read({ ...request, path: join(ws.root, 'alias.txt') })).toEqual({
      ok: false,
      kind: 'refused',
      reason: 'invalid_path',
      rule: 'roots.open-mismatch',
      message: 'the final component became a symlink',
      osCode: 'ELOOP',
    });
    expect(await pool.read({ ...request, path: join(ws.root, 'target.txt') })).toMatchObject({
      ok: true,
      result: { content: 'target', totalLines: 1 },
    });
    expect(
      await pool.read({ ...request, ino: `${stats.ino + 1n}`, path: join(ws.root, 'target.txt') }),
    ).toMatchObject({
      ok: false,
      rule: 'roots.open-mismatch',
    });
  });
});

describe('read_file and the pool bounds', () => {
  it('createBuiltinExecutors reads through the given pool by default, on the main thread when opted out', async () => {
    const closed = new FileWorkerPool({ maxThreads: 1 });
    await closed.close();
    const args = { path: 'lines.txt' };
    const ctx = ws.context(ws.decide('read_file', args));
    expect(
      await outcome(createBuiltinExecutors({ pool: closed }).read_file.execute(args, ctx)),
    ).toMatchObject({
      ok: false,
      code: 'pool_closed',
    });
    const optedOut = createBuiltinExecutors({ pool: closed, readFile: { pool: undefined } });
    expect(await optedOut.read_file.execute(args, ctx)).toMatchObject({ content: 'one\ntwo\nthree\nfour' });
    expect(await createBuiltinExecutors({ pool }).read_file.execute(args, ctx)).toMatchObject({
      content: 'one\ntwo\nthree\nfour',
    });
  });

  it('stops waiting at once when cancelled, closes the verified descriptors after the worker, one listener per signal', async () => {
    writeFileSync(join(ws.root, 'evil-cancel.txt'), `${'a'.repeat(40)}b\n`);
    const tiny = new FileWorkerPool({ maxThreads: 1, maxQueue: 4 });
    const busy = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    // Descriptors this process holds on the files read below (Linux).
    const openFds = (): number =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(join(ws.root, 'many'));
        } catch {
          return false;
        }
      }).length;
    try {
      await tiny.scan({
        base: join(ws.root, 'evil-cancel.txt'),
        singleFile: true,
        dirs: [],
        files: [],
        pattern: 'x',
        flags: '',
        maxFiles: 1,
        maxMatches: 1,
        maxFileBytes: 1024,
        maxLineChars: 100,
        skipDirs: [],
        deadline: Date.now() + 60_000,
      });
      // The single thread is stuck in a catastrophic pattern, so the reads wait in the queue.
      const stuck = tiny.scan(
        {
          base: join(ws.root, 'evil-cancel.txt'),
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
        },
        busy.signal,
      );
      stuck.catch(() => {});
      const call = new AbortController(); // One signal shared by every call, as in the runtime.
      const read = createReadFileExecutor({ pool: tiny });
      const reads = Array.from({ length: 20 }, (_, i) => {
        const args = { path: `many/f${i}.txt` };
        return outcome(read.execute(args, ws.context(ws.decide('read_file', args), { signal: call.signal })));
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (process.platform === 'linux') expect(openFds()).toBe(20);
      call.abort();
      for (const result of await Promise.all(reads))
        expect(result).toMatchObject({ ok: false, code: 'cancelled' });
      // The descriptors stay open until the worker has read (or refused) every file.
      expect(tiny.pending).toBe(2);
      busy.abort();
      const deadline = Date.now() + 10_000;
      while (tiny.pending > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(tiny.pending).toBe(0);
      if (process.platform === 'linux') expect(openFds()).toBe(0);
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      busy.abort();
      await tiny.close();
    }
  });

  it('a task queued behind an aborted running task still runs (the pool starts a thread again)', async () => {
    writeFileSync(join(ws.root, 'evil-queue.txt'), `${'a'.repeat(40)}b\n`);
    const tiny = new FileWorkerPool({ maxThreads: 1, maxQueue: 4 });
    const task = (pattern: string) => ({
      base: join(ws.root, 'evil-queue.txt'),
      singleFile: true,
      dirs: [],
      files: [],
      pattern,
      flags: '',
      maxFiles: 1,
      maxMatches: 1,
      maxFileBytes: 1024,
      maxLineChars: 100,
      skipDirs: [],
      deadline: Date.now() + 60_000,
    });
    const controller = new AbortController();
    try {
      await tiny.scan(task('x'));
      const stuck = tiny.scan(task('(a+)+$'), controller.signal);
      stuck.catch(() => {});
      const queued = tiny.scan(task('b$'));
      setTimeout(() => controller.abort(), 50);
      await expect(stuck).rejects.toMatchObject({ name: 'AbortError' });
      expect((await queued).matches).toHaveLength(1);
    } finally {
      controller.abort();
      await tiny.close();
    }
  });

  it('fails a waiting read with pool_closed when the pool closes', async () => {
    // Busy for seconds, not forever: closing may wait for the running task, never for a hang.
    writeFileSync(join(ws.root, 'evil-close.txt'), `${'a'.repeat(27)}b\n`);
    const tiny = new FileWorkerPool({ maxThreads: 1, maxQueue: 4 });
    const stuck = tiny.scan({
      base: join(ws.root, 'evil-close.txt'),
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
    });
    stuck.catch(() => {});
    const args = { path: 'lines.txt' };
    const waiting = outcome(
      createReadFileExecutor({ pool: tiny }).execute(args, ws.context(ws.decide('read_file', args))),
    );
    // The read is queued behind the busy thread (a condition, not a sleep).
    await eventually(() => tiny.pending >= 2, 20_000, 'the read queued behind the busy scan');
    await tiny.close();
    expect(await waiting).toMatchObject({ ok: false, code: 'pool_closed' });
  });

  it('refuses a read with pool_queue_full when the bounded queue is full', async () => {
    writeFileSync(join(ws.root, 'evil.txt'), `${'a'.repeat(40)}b\n`);
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
      await tiny.scan({ ...evil, pattern: 'x' });
      const running = [tiny.scan(evil, controller.signal), tiny.scan(evil, controller.signal)];
      for (const p of running) p.catch(() => {});
      const args = { path: 'lines.txt' };
      const read = createReadFileExecutor({ pool: tiny });
      expect(await outcome(read.execute(args, ws.context(ws.decide('read_file', args))))).toMatchObject({
        ok: false,
        code: 'pool_queue_full',
      });
    } finally {
      controller.abort();
      await tiny.close();
    }
  });
});
