import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Target } from '../../policy/decision.ts';
import { grantOptions } from '../../runtime/approvals/grant-options.ts';
import { approvalPreview, PREVIEW_FILE_MAX } from '../../runtime/approvals/preview.ts';
import { DIFF_LIMITS, unifiedDiff } from '../../runtime/approvals/unified-diff.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';
import { runs } from '../support/laws.ts';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-preview-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Applies a unified diff made by unifiedDiff to `before` (the law: it yields `after`). */
function apply(before: string, diff: string): string {
  const a = before.length === 0 ? [] : before.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let pos = 0;
  for (const line of diff.split('\n').slice(2)) {
    const h = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line);
    if (h) {
      const start = Number(h[2]) === 0 ? Number(h[1]) : Number(h[1]) - 1;
      out.push(...a.slice(pos, start));
      pos = start;
    } else if (line.startsWith(' ')) {
      out.push(line.slice(1));
      pos++;
    } else if (line.startsWith('-')) pos++;
    else if (line.startsWith('+')) out.push(line.slice(1));
  }
  out.push(...a.slice(pos));
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

describe('unified diff of an approval', () => {
  it('shows removed before added lines with three lines of context', () => {
    const d = unifiedDiff(
      '/p/a.txt',
      'l1\nl2\nl3\nold\nl5\nl6\nl7\nl8\n',
      'l1\nl2\nl3\nnew\nl5\nl6\nl7\nl8\n',
    );
    expect(d).toEqual({
      text: [
        '--- /p/a.txt',
        '+++ /p/a.txt',
        '@@ -1,7 +1,7 @@',
        ' l1',
        ' l2',
        ' l3',
        '-old',
        '+new',
        ' l5',
        ' l6',
        ' l7',
      ].join('\n'),
      truncated: false,
    });
    expect(unifiedDiff('/p/n.txt', '', 'a\n').text).toBe('--- /p/n.txt\n+++ /p/n.txt\n@@ -0,0 +1,1 @@\n+a');
    expect(unifiedDiff('/p/s.txt', 'same\n', 'same\n').text).toContain('(no change)');
  });

  it('applying the diff to the old text gives the new text', () => {
    const lines = fc.array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 40 });
    fc.assert(
      fc.property(lines, lines, (x, y) => {
        const before = x.length === 0 ? '' : `${x.join('\n')}\n`;
        const after = y.length === 0 ? '' : `${y.join('\n')}\n`;
        const d = unifiedDiff('/f', before, after);
        if (d.truncated) return;
        if (before === after) return;
        expect(apply(before, d.text)).toBe(after);
      }),
      { numRuns: runs(300) },
    );
  });

  it('caps what it shows: huge inputs are not diffed and long diffs are cut', () => {
    const big = Array.from({ length: DIFF_LIMITS.maxLines + 1 }, (_, i) => `l${i}`).join('\n');
    expect(unifiedDiff('/f', big, '')).toMatchObject({ truncated: true });
    expect(unifiedDiff('/f', big, '').text).toContain('not diffed');
    const many = Array.from({ length: 1000 }, (_, i) => `x${i}`).join('\n');
    const cut = unifiedDiff('/f', '', many);
    expect(cut.truncated).toBe(true);
    expect(cut.text.split('\n')).toHaveLength(DIFF_LIMITS.maxOutputLines + 1);
    expect(cut.text).toMatch(/… \d+ more diff lines$/);
  });

  it('diffs files at the 4,000-line cap: the diff of scattered edits applies to give the new text', () => {
    const before = Array.from({ length: DIFF_LIMITS.maxLines }, (_, i) => `line ${i}`);
    const after = [...before];
    after[10] = 'changed 10';
    after.splice(1500, 2);
    after.splice(2500, 0, 'inserted a', 'inserted b');
    after[DIFF_LIMITS.maxLines - 1] = 'changed last';
    const text = (lines: string[]) => `${lines.join('\n')}\n`;
    const d = unifiedDiff('/big', text(before), text(after));
    expect(d.truncated).toBe(false);
    expect(d.text.split('\n').filter((l) => l.startsWith('@@'))).toEqual([
      '@@ -8,7 +8,7 @@',
      '@@ -1498,8 +1498,6 @@',
      '@@ -2500,6 +2498,8 @@',
      '@@ -3997,4 +3997,4 @@',
    ]);
    expect(apply(text(before), d.text)).toBe(text(after));
  });

  it('shows a change too large to align as one replaced block, cut like any long diff', () => {
    const before = Array.from({ length: DIFF_LIMITS.maxLines }, (_, i) => `old ${i}`);
    const after = Array.from({ length: DIFF_LIMITS.maxLines }, (_, i) => `new ${i}`);
    before[0] = after[0] = 'same first';
    const d = unifiedDiff('/big', before.join('\n'), after.join('\n'));
    expect(d.truncated).toBe(true);
    const shown = d.text.split('\n');
    expect(shown.slice(0, 5)).toEqual([
      '--- /big',
      '+++ /big',
      '@@ -1,4000 +1,4000 @@',
      ' same first',
      '-old 1',
    ]);
    expect(shown).toHaveLength(DIFF_LIMITS.maxOutputLines + 1);
    expect(shown.at(-1)).toBe(`… ${2 + 1 + 1 + 2 * 3999 - DIFF_LIMITS.maxOutputLines} more diff lines`);
  });
});

const target = (argument: string, resolved: string): Target => ({
  argument,
  input: resolved,
  resolved,
  root: 'project',
  access: 'read-write',
});
const redact = (t: string) => t.replaceAll('s3cret-value', '[REDACTED]');

describe('approval preview', () => {
  it('shows the exact command and its cwd (the primary root without one), redacted', () => {
    expect(approvalPreview('shell', { command: 'deploy --key s3cret-value' }, [], '/root/p', redact)).toEqual(
      {
        kind: 'command',
        command: 'deploy --key [REDACTED]',
        cwd: '/root/p',
      },
    );
    expect(
      approvalPreview(
        'shell',
        { command: 'ls', cwd: 'sub' },
        [target('cwd', '/root/p/sub')],
        '/root/p',
        redact,
      ),
    ).toMatchObject({ cwd: '/root/p/sub' });
  });

  it('diffs a write and an edit against the file as it is now, redacted; explains an edit that would fail', () => {
    const f = join(dir, 'edit.txt');
    writeFileSync(f, 'a\ntoken s3cret-value\nb\n');
    const w = approvalPreview(
      'write_file',
      { path: f, content: 'a\nb\n' },
      [target('path', f)],
      null,
      redact,
    );
    expect(w).toMatchObject({ kind: 'diff', path: f, truncated: false, note: null });
    expect(w?.kind === 'diff' && w.diff).toContain('-token [REDACTED]');
    expect(JSON.stringify(w)).not.toContain('s3cret');
    const e = approvalPreview(
      'edit_file',
      { path: f, old: 'b', new: 'c' },
      [target('path', f)],
      null,
      redact,
    );
    expect(e?.kind === 'diff' && e.diff).toContain('-b\n+c');
    expect(
      approvalPreview('edit_file', { path: f, old: 'zzz', new: 'c' }, [target('path', f)], null, redact),
    ).toMatchObject({ diff: null, note: expect.stringContaining('not in the file') });
    writeFileSync(f, 'x x');
    expect(
      approvalPreview('edit_file', { path: f, old: 'x', new: 'y' }, [target('path', f)], null, redact),
    ).toMatchObject({
      diff: null,
      note: expect.stringContaining('more than once'),
    });
    const missing = join(dir, 'new.txt');
    expect(
      approvalPreview(
        'write_file',
        { path: missing, content: 'n\n' },
        [target('path', missing)],
        null,
        redact,
      ),
    ).toMatchObject({ diff: `--- ${missing}\n+++ ${missing}\n@@ -0,0 +1,1 @@\n+n` });
  });

  it('never blocks on a FIFO, never follows a symlink, and skips binary or oversized files', () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    expect(
      approvalPreview('write_file', { path: fifo, content: 'x' }, [target('path', fifo)], null, redact),
    ).toMatchObject({
      diff: null,
      note: 'the target is not a regular file',
    });
    const link = join(dir, 'link');
    writeFileSync(join(dir, 'real.txt'), 'secret-ish');
    symlinkSync(join(dir, 'real.txt'), link);
    expect(
      approvalPreview('write_file', { path: link, content: 'x' }, [target('path', link)], null, redact),
    ).toMatchObject({
      diff: null,
      note: expect.stringContaining('ELOOP'),
    });
    const bin = join(dir, 'bin');
    writeFileSync(bin, Buffer.from([1, 0, 2]));
    expect(
      approvalPreview('write_file', { path: bin, content: 'x' }, [target('path', bin)], null, redact),
    ).toMatchObject({
      note: 'the file is binary',
    });
    const huge = join(dir, 'huge');
    writeFileSync(huge, Buffer.alloc(PREVIEW_FILE_MAX + 1, 97));
    expect(
      approvalPreview('write_file', { path: huge, content: 'x' }, [target('path', huge)], null, redact),
    ).toMatchObject({
      note: expect.stringContaining('too large'),
    });
  });

  it('has no preview for other tools', () => {
    expect(approvalPreview('send_message', { channel: '#x', text: 'y' }, [], null, redact)).toBeNull();
  });
});

describe('grant options of an approval request', () => {
  const loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'p', path: '.', access: 'read-write' }] },
      agents: { a: { mode: 'ask' } },
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );
  const registry = registryFromConfig(loaded);
  const d = (reason: string) => ({ reason: reason as never, targets: [] });

  it.each([
    [
      'write_file',
      { path: 'x', content: 'y' },
      'mode_ask',
      'task-1',
      { session: { target: null }, standing: null },
    ],
    [
      'shell',
      { command: 'make test' },
      'mode_ask',
      'task-1',
      { session: { target: 'make test' }, standing: null },
    ],
    ['shell', { command: 'eval "$x"' }, 'unanalyzable_command', 'task-1', { session: null, standing: null }],
    [
      'send_message',
      { channel: '#ops', text: 'hi' },
      'mode_ask',
      'task-1',
      { session: { target: null }, standing: { target: '#ops' } },
    ],
    [
      'send_message',
      { channel: '#ops', text: 'hi' },
      'mode_ask',
      null,
      { session: { target: null }, standing: null },
    ],
    [
      'http_request',
      { url: 'https://x.test/a', method: 'GET' },
      'mode_ask',
      't',
      { session: { target: null }, standing: { target: 'https://x.test/a' } },
    ],
    [
      'request_directory_access',
      { path: '/x', access: 'read' },
      'tool_default_ask',
      't',
      { session: null, standing: null },
    ],
    ['no_such_tool', {}, 'tool_not_found', 't', { session: null, standing: null }],
  ])('%s (%s) → %j', (tool, args, reason, taskId, expected) => {
    expect(grantOptions(registry, tool, args, d(reason), taskId)).toEqual(expected);
  });
});
