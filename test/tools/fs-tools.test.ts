import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileExecutor } from '../../actors/tools/fs/edit-file.ts';
import { createListDirExecutor } from '../../actors/tools/fs/list-dir.ts';
import { createReadFileExecutor } from '../../actors/tools/fs/read-file.ts';
import { pinDirectory } from '../../actors/tools/fs/pinned-dir.ts';
import { createWriteFileExecutor } from '../../actors/tools/fs/write-file.ts';
import { nodeFs } from '../../policy/paths/index.ts';
import { ToolError } from '../../actors/tools/types.ts';
import { createTestWorkspace, type TestWorkspace } from './support.ts';

let ws: TestWorkspace;
beforeEach(() => {
  ws = createTestWorkspace();
});
afterEach(() => ws.cleanup());

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ToolError) return error.code;
    throw error;
  }
  throw new Error('expected a ToolError');
}

describe('read_file', () => {
  const read = createReadFileExecutor({ maxBytes: 64 });

  it('returns a line range, 1-based and inclusive, with the total line count', async () => {
    writeFileSync(join(ws.root, 'a.txt'), 'one\ntwo\nthree\nfour\n');
    const args = { path: 'a.txt', startLine: 2, endLine: 3 };
    const result = await read.execute(args, ws.context(ws.decide('read_file', args)));
    expect(result).toMatchObject({ content: 'two\nthree', startLine: 2, endLine: 3, truncated: false });
    const all = { path: 'a.txt' };
    expect(await read.execute(all, ws.context(ws.decide('read_file', all)))).toMatchObject({
      content: 'one\ntwo\nthree\nfour',
      totalLines: 4,
      endLine: 4,
    });
  });

  it('caps the content and says so', async () => {
    writeFileSync(join(ws.root, 'big.txt'), Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n'));
    const args = { path: 'big.txt' };
    const result = (await read.execute(args, ws.context(ws.decide('read_file', args)))) as {
      content: string;
      truncated: boolean;
    };
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(64);
  });

  it('refuses binary files and a bad range', async () => {
    writeFileSync(join(ws.root, 'bin'), Buffer.from([1, 0, 2, 3]));
    const args = { path: 'bin' };
    expect(await codeOf(read.execute(args, ws.context(ws.decide('read_file', args))))).toBe('binary_file');
    writeFileSync(join(ws.root, 'a.txt'), 'x');
    const bad = { path: 'a.txt', startLine: 3, endLine: 2 };
    expect(await codeOf(read.execute(bad, ws.context(ws.decide('read_file', bad))))).toBe(
      'invalid_line_range',
    );
  });

  it('refuses at execution a file replaced by a symlink to outside after the decision', async () => {
    writeFileSync(join(ws.root, 'a.txt'), 'inside');
    writeFileSync(join(ws.outside, 'secret.txt'), 'outside');
    const args = { path: 'a.txt' };
    const decision = ws.decide('read_file', args);
    renameSync(join(ws.root, 'a.txt'), join(ws.root, 'old.txt'));
    symlinkSync(join(ws.outside, 'secret.txt'), join(ws.root, 'a.txt'));
    expect(await codeOf(read.execute(args, ws.context(decision)))).toBe('outside_roots');
  });
});

describe('list_dir', () => {
  it('lists sorted entries with kinds, capped', async () => {
    mkdirSync(join(ws.root, 'd'));
    writeFileSync(join(ws.root, 'd', 'b.txt'), 'bb');
    writeFileSync(join(ws.root, 'd', 'a.txt'), 'a');
    mkdirSync(join(ws.root, 'd', 'sub'));
    symlinkSync(ws.outside, join(ws.root, 'd', 'link'));
    const list = createListDirExecutor({ maxEntries: 3 });
    const args = { path: 'd' };
    const result = await list.execute(args, ws.context(ws.decide('list_dir', args)));
    expect(result).toEqual({
      path: join(ws.root, 'd'),
      entries: [
        { name: 'a.txt', kind: 'file', size: 1 },
        { name: 'b.txt', kind: 'file', size: 2 },
        { name: 'link', kind: 'symlink' },
      ],
      total: 4,
      truncated: true,
      hidden: 0,
    });
  });

  it('withholds entries a root deny glob refuses, and only counts them', async () => {
    mkdirSync(join(ws.root, 'd'));
    mkdirSync(join(ws.root, 'd', 'private'));
    writeFileSync(join(ws.root, 'd', 'private', 'key.pem'), 'k');
    writeFileSync(join(ws.root, 'd', 'notes.txt'), 'n');
    const before = ws.roots[0]!;
    ws.roots[0] = { ...before, deny: ['d/private', 'd/private/**'] };
    try {
      const args = { path: 'd' };
      const result = await createListDirExecutor().execute(args, ws.context(ws.decide('list_dir', args)));
      expect(result).toMatchObject({ entries: [{ name: 'notes.txt', kind: 'file' }], total: 1, hidden: 1 });
      expect(JSON.stringify(result)).not.toContain('private');
    } finally {
      ws.roots[0] = before;
    }
  });

  it('refuses a directory swapped for a symlink to outside after the decision', async () => {
    mkdirSync(join(ws.root, 'd'));
    writeFileSync(join(ws.outside, 'private.txt'), 'x');
    const args = { path: 'd' };
    const decision = ws.decide('list_dir', args);
    renameSync(join(ws.root, 'd'), join(ws.root, 'd-old'));
    symlinkSync(ws.outside, join(ws.root, 'd'));
    expect(await codeOf(createListDirExecutor().execute(args, ws.context(decision)))).toBe('outside_roots');
  });
});

describe('write_file', () => {
  const write = createWriteFileExecutor({ maxBytes: 1024 });

  it('creates files and parents, replaces atomically, keeps the mode, leaves no temp file', async () => {
    const args = { path: 'new/dir/f.txt', content: 'hello' };
    const created = await write.execute(args, ws.context(ws.decide('write_file', args)));
    expect(created).toMatchObject({ path: join(ws.root, 'new/dir/f.txt'), created: true, bytes: 5 });
    chmodSync(join(ws.root, 'new/dir/f.txt'), 0o640);
    const again = { path: 'new/dir/f.txt', content: 'bye' };
    expect(await write.execute(again, ws.context(ws.decide('write_file', again)))).toMatchObject({
      created: false,
    });
    expect(readFileSync(join(ws.root, 'new/dir/f.txt'), 'utf8')).toBe('bye');
    expect(statSync(join(ws.root, 'new/dir/f.txt')).mode & 0o777).toBe(0o640);
    expect(readdirSync(join(ws.root, 'new/dir'))).toEqual(['f.txt']);
  });

  it('refuses content over the cap before touching anything', async () => {
    const args = { path: 'f.txt', content: 'x'.repeat(2000) };
    expect(await codeOf(write.execute(args, ws.context(ws.decide('write_file', args))))).toBe(
      'content_too_large',
    );
    expect(readdirSync(ws.root)).toEqual([]);
  });

  it('TOCTOU: a target directory swapped for a symlink to outside after the decision is refused', async () => {
    mkdirSync(join(ws.root, 'sub'));
    const args = { path: 'sub/f.txt', content: 'escaped?' };
    const decision = ws.decide('write_file', args);
    expect(decision.targets[0]?.resolved).toBe(join(ws.root, 'sub/f.txt'));
    renameSync(join(ws.root, 'sub'), join(ws.root, 'sub-old'));
    symlinkSync(ws.outside, join(ws.root, 'sub'));
    expect(await codeOf(write.execute(args, ws.context(decision)))).toBe('outside_roots');
    expect(readdirSync(ws.outside)).toEqual([]);
  });

  it('TOCTOU: a final component swapped for a symlink after the decision is refused, the outside file untouched', async () => {
    writeFileSync(join(ws.root, 'f.txt'), 'inside');
    writeFileSync(join(ws.outside, 'victim.txt'), 'original');
    const args = { path: 'f.txt', content: 'overwritten?' };
    const decision = ws.decide('write_file', args);
    renameSync(join(ws.root, 'f.txt'), join(ws.root, 'g.txt'));
    symlinkSync(join(ws.outside, 'victim.txt'), join(ws.root, 'f.txt'));
    expect(await codeOf(write.execute(args, ws.context(decision)))).toBe('outside_roots');
    expect(readFileSync(join(ws.outside, 'victim.txt'), 'utf8')).toBe('original');
  });

  it('refuses when the roots shrank to read-only since the decision', async () => {
    const args = { path: 'f.txt', content: 'x' };
    const decision = ws.decide('write_file', args);
    const readOnly = ws.roots.map((r) => ({ ...r, access: 'read' as const }));
    expect(await codeOf(write.execute(args, ws.context(decision, { roots: readOnly })))).toBe(
      'read_only_root',
    );
  });
});

describe('edit_file', () => {
  const edit = createEditFileExecutor();

  it('replaces exactly one occurrence and reports its line', async () => {
    writeFileSync(join(ws.root, 'e.txt'), 'alpha\nbeta\ngamma\n');
    const args = { path: 'e.txt', old: 'beta', new: 'BETA' };
    expect(await edit.execute(args, ws.context(ws.decide('edit_file', args)))).toMatchObject({ line: 2 });
    expect(readFileSync(join(ws.root, 'e.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n');
  });

  it('refuses a missing or ambiguous text and writes nothing', async () => {
    writeFileSync(join(ws.root, 'e.txt'), 'x x');
    const missing = { path: 'e.txt', old: 'y', new: 'z' };
    expect(await codeOf(edit.execute(missing, ws.context(ws.decide('edit_file', missing))))).toBe(
      'edit_old_not_found',
    );
    const twice = { path: 'e.txt', old: 'x', new: 'z' };
    expect(await codeOf(edit.execute(twice, ws.context(ws.decide('edit_file', twice))))).toBe(
      'edit_old_ambiguous',
    );
    expect(readFileSync(join(ws.root, 'e.txt'), 'utf8')).toBe('x x');
  });

  it('refuses to replace a file that changed between reading and writing it', async () => {
    const file = join(ws.root, 'e.txt');
    writeFileSync(file, 'before');
    const meddling = createEditFileExecutor({
      execFs: {
        ...nodeFs,
        close(fd) {
          nodeFs.close(fd);
          writeFileSync(file, 'someone else wrote this');
        },
      },
    });
    const args = { path: 'e.txt', old: 'before', new: 'after' };
    expect(await codeOf(meddling.execute(args, ws.context(ws.decide('edit_file', args))))).toBe(
      'file_changed_during_edit',
    );
    expect(readFileSync(file, 'utf8')).toBe('someone else wrote this');
  });

  it('refuses an edit through a directory swapped to outside', async () => {
    mkdirSync(join(ws.root, 'sub'));
    writeFileSync(join(ws.root, 'sub', 'e.txt'), 'inside');
    writeFileSync(join(ws.outside, 'e.txt'), 'inside');
    const args = { path: 'sub/e.txt', old: 'inside', new: 'changed' };
    const decision = ws.decide('edit_file', args);
    renameSync(join(ws.root, 'sub'), join(ws.root, 'sub-old'));
    symlinkSync(ws.outside, join(ws.root, 'sub'));
    expect(await codeOf(edit.execute(args, ws.context(decision)))).toBe('outside_roots');
    expect(readFileSync(join(ws.outside, 'e.txt'), 'utf8')).toBe('inside');
  });
});

describe('pinDirectory', () => {
  it('keeps reaching the opened directory after its path is swapped for a symlink', () => {
    mkdirSync(join(ws.root, 'p'));
    const dir = pinDirectory(join(ws.root, 'p'));
    expect(dir).not.toBeNull();
    if (dir === null) return;
    try {
      expect(dir.stillAt()).toBe(true);
      renameSync(join(ws.root, 'p'), join(ws.root, 'p-moved'));
      symlinkSync(ws.outside, join(ws.root, 'p'));
      expect(dir.stillAt()).toBe(false);
      writeFileSync(dir.entry('x.txt'), 'pinned');
      expect(readdirSync(ws.outside)).toEqual([]);
      expect(readFileSync(join(ws.root, 'p-moved', 'x.txt'), 'utf8')).toBe('pinned');
    } finally {
      dir.close();
    }
  });

  it('refuses a path that is a symlink', () => {
    symlinkSync(ws.outside, join(ws.root, 'l'));
    expect(pinDirectory(join(ws.root, 'l'))).toBeNull();
  });
});
