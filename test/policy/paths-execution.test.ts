import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Target } from '../../policy/decision.ts';
import {
  nodeFs,
  openAtExecution,
  recheckAtExecution,
  writeFileAtExecution,
  type ExecFs,
  type SnotraPathGuard,
} from '../../policy/paths/index.ts';
import { guardFor, makeTree, projectRoots, root, type TempTree } from './paths-tree.ts';

let tree: TempTree;
let guard: SnotraPathGuard;

beforeEach(() => {
  tree = makeTree();
  guard = guardFor(tree);
});
afterEach(() => tree.cleanup());

function decide(input: string, access: 'read' | 'write'): Target {
  const r = guard.resolve('path', input, access, projectRoots(tree));
  if (!r.ok) throw new Error(`expected ${input} to be allowed, got ${r.reason}`);
  return r.target;
}

/** Replaces the real directory `relative` (under the tree) with a symlink to `target`. */
function swapForLink(relative: string, target: string): void {
  fs.rmSync(path.join(tree.dir, relative), { recursive: true, force: true });
  fs.symlinkSync(target, path.join(tree.dir, relative));
}

/** The real file system, with `beforeOpen` run in the window between the re-check and the open. */
function racingFs(beforeOpen: () => void): ExecFs & { readonly open: number; readonly closed: number } {
  let open = 0;
  let closed = 0;
  return {
    ...nodeFs,
    openNoFollow(p, mode) {
      beforeOpen();
      const r = nodeFs.openNoFollow(p, mode);
      if (r.ok) open++;
      return r;
    },
    close(fd) {
      closed++;
      nodeFs.close(fd);
    },
    get open() {
      return open;
    },
    get closed() {
      return closed;
    },
  };
}

describe('recheckAtExecution', () => {
  it('passes an unchanged target and returns its canonical path', () => {
    const target = decide('src/main.ts', 'write');
    expect(recheckAtExecution(target, 'write', projectRoots(tree), guard)).toEqual({
      ok: true,
      path: path.join(tree.proj, 'src/main.ts'),
      target,
    });
  });

  it('refuses when a directory was swapped for a symlink to outside after the decision', () => {
    tree.mkdir('w/proj/out');
    const target = decide('out/report.txt', 'write');
    swapForLink('w/proj/out', tree.outside);
    expect(recheckAtExecution(target, 'write', projectRoots(tree), guard)).toMatchObject({
      ok: false,
      reason: 'outside_roots',
    });
  });

  it('refuses when the path now resolves elsewhere inside the root', () => {
    tree.mkdir('w/proj/out');
    const target = decide('out/report.txt', 'write');
    swapForLink('w/proj/out', 'src');
    expect(recheckAtExecution(target, 'write', projectRoots(tree), guard)).toMatchObject({
      ok: false,
      reason: 'invalid_path',
      rule: { id: 'roots.changed-since-decision' },
    });
  });

  it('refuses when the leaf became a dangling symlink (a write would create a file elsewhere)', () => {
    const target = decide('src/new.txt', 'write');
    fs.symlinkSync(path.join(tree.outside, 'planted.txt'), path.join(tree.proj, 'src/new.txt'));
    expect(recheckAtExecution(target, 'write', projectRoots(tree), guard)).toMatchObject({
      ok: false,
      rule: { id: 'roots.dangling-symlink' },
    });
  });

  it('applies root changes made since the decision at once', () => {
    const target = decide('src/main.ts', 'write');
    const readOnly = [root('project', tree.proj, 'read', { primary: true })];
    expect(recheckAtExecution(target, 'write', readOnly, guard)).toMatchObject({ reason: 'read_only_root' });
    expect(recheckAtExecution(target, 'write', [], guard)).toMatchObject({ ok: false });
  });

  it('refuses a target that was never resolved', () => {
    const target: Target = { argument: 'path', input: 'x', resolved: null, root: null, access: null };
    expect(recheckAtExecution(target, 'read', projectRoots(tree), guard)).toMatchObject({
      ok: false,
      rule: { id: 'roots.changed-since-decision' },
    });
  });
});

describe('openAtExecution and writeFileAtExecution', () => {
  it('opens the decided file and hands back a descriptor that reads it', () => {
    const result = openAtExecution(decide('src/main.ts', 'read'), 'read', projectRoots(tree), guard, nodeFs);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    try {
      expect(fs.readFileSync(result.fd, 'utf8')).toBe('main');
    } finally {
      fs.closeSync(result.fd);
    }
  });

  it('writes a new file, creating missing parent folders on request', () => {
    const target = decide('gen/deep/out.txt', 'write');
    const data = new TextEncoder().encode('generated');
    expect(writeFileAtExecution(target, projectRoots(tree), guard, nodeFs, data)).toMatchObject({
      ok: false,
    });
    expect(
      writeFileAtExecution(target, projectRoots(tree), guard, nodeFs, data, { createParents: true }),
    ).toEqual({
      ok: true,
      path: path.join(tree.proj, 'gen/deep/out.txt'),
    });
    expect(fs.readFileSync(path.join(tree.proj, 'gen/deep/out.txt'), 'utf8')).toBe('generated');
  });

  it('replaces the whole content of an existing file', () => {
    const data = new TextEncoder().encode('m');
    expect(
      writeFileAtExecution(decide('src/main.ts', 'write'), projectRoots(tree), guard, nodeFs, data),
    ).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(tree.proj, 'src/main.ts'), 'utf8')).toBe('m');
  });

  it('never opens through a final-component symlink planted between the re-check and the open', () => {
    const victim = tree.file('outside/victim.txt', 'keep');
    const target = decide('src/main.ts', 'write');
    const racing = racingFs(() => swapForLink('w/proj/src/main.ts', victim));
    const data = new TextEncoder().encode('pwned');
    expect(writeFileAtExecution(target, projectRoots(tree), guard, racing, data)).toMatchObject({
      ok: false,
      rule: { id: 'roots.open-mismatch' },
      code: 'ELOOP',
    });
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep');
  });

  it('detects an intermediate directory swapped for a link to outside during the open, and never writes there', () => {
    tree.mkdir('w/proj/out');
    const victim = tree.file('outside/report.txt', 'keep');
    const target = decide('out/report.txt', 'write');
    const racing = racingFs(() => swapForLink('w/proj/out', tree.outside));
    const data = new TextEncoder().encode('pwned');
    expect(writeFileAtExecution(target, projectRoots(tree), guard, racing, data)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^(invalid_path|outside_roots)$/),
    });
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep');
    expect(racing.closed).toBe(racing.open);
  });

  it('detects the same swap for a read and closes the descriptor', () => {
    tree.file('w/proj/out/report.txt', 'inside');
    tree.file('outside/report.txt', 'outside');
    const target = decide('out/report.txt', 'read');
    const racing = racingFs(() => swapForLink('w/proj/out', tree.outside));
    expect(openAtExecution(target, 'read', projectRoots(tree), guard, racing)).toMatchObject({
      ok: false,
      rule: { id: 'roots.open-mismatch' },
    });
    expect(racing.open).toBe(1);
    expect(racing.closed).toBe(1);
  });

  it('refuses directories and FIFOs without blocking', () => {
    expect(openAtExecution(decide('src', 'read'), 'read', projectRoots(tree), guard, nodeFs)).toMatchObject({
      ok: false,
      rule: { id: 'roots.not-a-regular-file' },
    });
    const fifo = path.join(tree.proj, 'pipe');
    try {
      execFileSync('mkfifo', [fifo]);
    } catch {
      return; // no mkfifo on this host
    }
    expect(openAtExecution(decide('pipe', 'read'), 'read', projectRoots(tree), guard, nodeFs)).toMatchObject({
      ok: false,
      rule: { id: 'roots.not-a-regular-file' },
    });
  });

  it('reports a missing file on read as an I/O refusal with the errno name', () => {
    expect(
      openAtExecution(decide('nope.txt', 'read'), 'read', projectRoots(tree), guard, nodeFs),
    ).toMatchObject({
      ok: false,
      rule: { id: 'roots.io-failed' },
      code: 'ENOENT',
    });
  });
});
