import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { listProcesses, isLiveState, ProcessSupervisor } from '../../runtime/processes/index.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'runtime-standin.ts');

interface Tree {
  pid: number;
  pgid: number;
  members: number[];
  sleepPids: number[];
}

/** Live processes (from /proc) that are in group `pgid` or are one of `pids`. */
async function survivors(pgid: number, pids: readonly number[]): Promise<number[]> {
  const all = await listProcesses();
  return all
    .filter((p) => isLiveState(p.state) && (p.pgrp === pgid || pids.includes(p.pid)))
    .map((p) => p.pid);
}

async function startRuntime(mode: 'sandbox' | 'none'): Promise<{ tree: Tree; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, [...childNodeArgs(FIXTURE), mode], {
    cwd: join(import.meta.dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', () => reject(new Error('the runtime stand-in exited before reporting its tree')));
  });
  return { tree: JSON.parse(first) as Tree, exited };
}

async function expectTreeGoneWithin(tree: Tree, ms: number): Promise<number> {
  const started = Date.now();
  let left = await survivors(tree.pgid, [...tree.members, tree.pid]);
  while (left.length > 0 && Date.now() - started < ms) {
    await delay(50);
    left = await survivors(tree.pgid, [...tree.members, tree.pid]);
  }
  expect(left).toEqual([]);
  return Date.now() - started;
}

describe('process tree teardown (contract 12)', () => {
  it.each([
    ['SIGTERM', 'sandbox'],
    ['SIGKILL', 'sandbox'],
    ['SIGTERM', 'none'],
    ['SIGKILL', 'none'],
  ] as const)(
    'leaves no process of the shell call tree within 5 s after the runtime gets %s (sandbox %s)',
    async (signal, mode) => {
      const { tree, exited } = await startRuntime(mode);
      expect(tree.sleepPids).toHaveLength(2);
      expect(tree.pgid).not.toBe(tree.pid);
      expect(await survivors(tree.pgid, tree.sleepPids)).toEqual(expect.arrayContaining(tree.sleepPids));
      process.kill(tree.pid, signal);
      await exited;
      await expectTreeGoneWithin(tree, 5000);
    },
    20_000,
  );

  it('shutdown() ends every tracked tree and refuses new children', async () => {
    const supervisor = new ProcessSupervisor({ killGraceMs: 300 });
    const children = [1, 2].map(() =>
      supervisor.spawn({ command: '/bin/sh', args: ['-c', 'sleep 321.5 & sleep 321.5'], cwd: '/' }),
    );
    await delay(100);
    expect(supervisor.children).toHaveLength(2);
    await supervisor.shutdown();
    for (const child of children) expect(await survivors(child.pgid, [])).toEqual([]);
    expect(supervisor.children).toHaveLength(0);
    expect(() => supervisor.spawn({ command: 'true', args: [], cwd: '/' })).toThrow(/shut down/);
  });

  it('escalates to SIGKILL for a tree that ignores SIGTERM', async () => {
    const supervisor = new ProcessSupervisor({ killGraceMs: 300 });
    // SIG_IGN is inherited across exec: both sleeps ignore SIGTERM too.
    const child = supervisor.spawn({
      command: '/bin/sh',
      args: ['-c', "trap '' TERM; sleep 322.5 & sleep 322.5"],
      cwd: '/',
    });
    await delay(100);
    const started = Date.now();
    await child.terminate();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(await survivors(child.pgid, [])).toEqual([]);
    await supervisor.shutdown();
  });

  it('keeps a long-lived stdio child (MCP-style) talking over stdin/stdout until terminated', async () => {
    const supervisor = new ProcessSupervisor({ killGraceMs: 300 });
    const child = supervisor.spawn({ command: 'cat', args: [], cwd: '/', stdin: 'pipe', label: 'mcp:echo' });
    const echoed = new Promise<string>((resolve) =>
      child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())),
    );
    child.stdin?.write('{"jsonrpc":"2.0","id":1}\n');
    expect(await echoed).toBe('{"jsonrpc":"2.0","id":1}\n');
    expect(supervisor.children.map((c) => c.label)).toEqual(['mcp:echo']);
    await supervisor.shutdown();
    expect(await survivors(child.pgid, [])).toEqual([]);
    expect((await child.exited).signal).toBe('SIGTERM');
  });
});
