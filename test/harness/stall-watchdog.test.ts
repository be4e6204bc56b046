import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { descendants, StallWatchdog } from '../support/stall-watchdog.ts';

const root = resolve(import.meta.dirname, '../..');

describe('StallWatchdog', () => {
  it('reports a file only once nothing started or ended in it for longer than the limit', () => {
    const w = new StallWatchdog(1_000);
    w.fileStarted('a.test.ts', 0);
    w.fileStarted('b.test.ts', 0);
    w.testStarted('a.test.ts', 'slow', 500);
    expect(w.stalled(1_000)).toEqual([]);
    w.testEnded('b.test.ts', 'quick', 900);
    expect(w.stalled(1_600)).toEqual([{ file: 'a.test.ts', quietMs: 1_100, running: ['slow'] }]);
    w.testEnded('a.test.ts', 'slow', 1_700);
    w.fileEnded('b.test.ts');
    expect(w.stalled(2_600)).toEqual([]);
    expect(w.stalled(2_701)).toEqual([{ file: 'a.test.ts', quietMs: 1_001, running: [] }]);
    w.fileEnded('a.test.ts');
    expect(w.stalled(1e9)).toEqual([]);
  });

  it('a test event delivered after its file ended does not put the file back in flight', () => {
    // Vitest reports two worker messages read at once concurrently: the last test's result (in
    // the first) can reach the reporter after the file's end (in the second).
    const w = new StallWatchdog(1_000);
    w.fileStarted('a.test.ts', 0);
    w.testStarted('a.test.ts', 'first', 10);
    w.fileEnded('a.test.ts');
    w.testEnded('a.test.ts', 'first', 20);
    w.testStarted('a.test.ts', 'second', 30);
    w.testEnded('a.test.ts', 'second', 40);
    expect(w.stalled(1e9)).toEqual([]);
    // Events that come before the file's start are kept, and the start opens it afresh.
    w.testStarted('b.test.ts', 'early', 0);
    w.fileStarted('b.test.ts', 500);
    expect(w.stalled(1_400)).toEqual([]);
    expect(w.stalled(1_501)).toEqual([{ file: 'b.test.ts', quietMs: 1_001, running: [] }]);
    w.fileEnded('b.test.ts');
    w.testEnded('b.test.ts', 'early', 1_600);
    expect(w.stalled(1e9)).toEqual([]);
  });

  it('refuses a limit that is not a positive number', () => {
    expect(() => new StallWatchdog(Number('x'))).toThrow(
      'stall limit must be a positive number of ms, got NaN',
    );
    expect(() => new StallWatchdog(0)).toThrow('got 0');
  });

  it('descendants: the whole live subtree, never the root, its parent, a zombie or another tree', () => {
    const p = (pid: number, ppid: number, state = 'S') => ({ pid, ppid, state, pgrp: pid, start: pid });
    const all = [p(1, 0), p(10, 1), p(11, 10), p(12, 11), p(13, 11, 'Z'), p(14, 10), p(20, 1), p(21, 20)];
    expect(descendants(all, 10).sort((a, b) => a - b)).toEqual([11, 12, 14]);
    expect(descendants(all, 12)).toEqual([]);
  });
});

describe('a run with a blocked worker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'snotra-stall-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ends: the file and its test are named, the closing line counts it failed, no process is left', async () => {
    const pidFile = join(dir, 'child.pid');
    const env: NodeJS.ProcessEnv = {};
    // The nested run must not take this worker's vitest settings for its own.
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('VITEST') && k !== 'NODE_OPTIONS') env[k] = v;
    const child = spawn(
      process.execPath,
      [
        join(root, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--config',
        join(import.meta.dirname, 'fixtures/stall/stall.config.ts'),
      ],
      { cwd: root, env: { ...env, SNOTRA_TEST_STALL_MS: '9000', STALL_PIDFILE: pidFile, NO_COLOR: '1' } },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const code = await new Promise<number | null>((done) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        done(c);
      });
    });
    expect(code, out).toBe(1);
    expect(out).toContain('blocked.check.ts: no test started or ended for');
    expect(out).toMatch(/(still running|not ended): "waits on a child that ignores SIGTERM"/);
    expect(out.trimEnd().split('\n').at(-1)).toBe('1 passed, 1 failed');
    // The child that ignored SIGTERM was killed with the blocked worker.
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const deadline = Date.now() + 20_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid), `pid ${pid} is still running`).toBe(false);
  }, 120_000);
});

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}
