import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProcessSupervisor, runToCompletion } from '../../runtime/processes/index.ts';
import type { Spawner } from '../../runtime/processes/run.ts';

const dir = mkdtempSync(join(tmpdir(), 'snotra-cut-'));
const supervisor = new ProcessSupervisor({ killGraceMs: 500 });
afterAll(async () => {
  await supervisor.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

/** A spawner whose child fires `onExit` the moment its main program's exit is seen. */
function firingAtExit(onExit: () => void): Spawner {
  return {
    spawn(request) {
      const child = supervisor.spawn(request);
      const exited = child.exited.then((e) => {
        onExit();
        return e;
      });
      return Object.assign(Object.create(Object.getPrototypeOf(child) as object) as object, child, {
        exited,
      }) as typeof child;
    },
  };
}

describe('a cancel that arrives after the program exited', () => {
  it('a program that exited 0 is reported finished, not cancelled (its effect happened once)', async () => {
    const ac = new AbortController();
    const out = join(dir, 'once.txt');
    const r = await runToCompletion(
      firingAtExit(() => ac.abort()),
      {
        command: '/bin/sh',
        args: ['-c', `echo step >> '${out}'`],
        cwd: dir,
        timeoutMs: 30_000,
        maxOutputBytes: 1024,
        signal: ac.signal,
      },
    );
    expect(ac.signal.aborted).toBe(true);
    expect(r).toMatchObject({ exitCode: 0, cancelled: false, timedOut: false });
    expect(readFileSync(out, 'utf8')).toBe('step\n');
  });

  it('a program cut by the cancel is still reported cancelled', async () => {
    const ac = new AbortController();
    const pending = runToCompletion(supervisor, {
      command: '/bin/sh',
      args: ['-c', 'echo ready; exec sleep 60'],
      cwd: dir,
      timeoutMs: 60_000,
      maxOutputBytes: 1024,
      signal: ac.signal,
    });
    ac.abort();
    const r = await pending;
    expect(r.cancelled).toBe(true);
    expect(r.exitCode).not.toBe(0);
  });
});
