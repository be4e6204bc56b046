import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import { ChatHistory, HISTORY_FILE, HISTORY_MAX } from '../../surfaces/cli/chat/history.ts';
import { joinContinued } from '../../surfaces/cli/chat/input.ts';
import { Spinner, SPINNER_TICK_MS } from '../../surfaces/cli/chat/spinner.ts';
import { words } from '../../surfaces/cli/chat/slash.ts';
import { ansi, paintFor, plain } from '../../surfaces/cli/run/paint.ts';
import { diffCounts, resultLines } from '../../surfaces/cli/run/result-line.ts';

const shell = (r: Record<string, unknown>) => JSON.stringify(r);

describe('short tool results', () => {
  it('a command: its exit code and its first lines, with how many more', () => {
    const lines = resultLines({
      tool: 'shell',
      args: { command: 'ls' },
      ok: true,
      content: shell({ exitCode: 0, stdout: 'a\nb\nc\nd\ne\n', stderr: '' }),
    });
    expect(lines).toEqual(['  ✓ exit 0', '    │ a', '    │ b', '    │ c', '    │ … 2 more lines']);
  });

  it('a failed command: its exit code and its stderr when it printed nothing else', () => {
    const content = shell({
      error: {
        code: 'command_failed',
        message: 'the command exited with code 2',
        details: { exitCode: 2, stdout: '', stderr: 'no such file\n' },
      },
    });
    expect(resultLines({ tool: 'shell', args: {}, ok: false, content })).toEqual([
      '  ✗ exit 2',
      '    │ no such file',
    ]);
  });

  it('a command whose observation was cut short (the feed caps it) still gives its exit code and first lines', () => {
    const full = shell({ exitCode: 0, stdout: `first\nsecond\n${'x'.repeat(5000)}`, stderr: '' });
    const content = full.slice(0, 40);
    const lines = resultLines({ tool: 'shell', args: {}, ok: true, content });
    expect(lines?.[0]).toBe('  ✓ exit 0');
    expect(lines?.[1]).toBe('    │ first');
  });

  it('output escape sequences are neutralized (a command cannot drive the terminal)', () => {
    const content = shell({ exitCode: 0, stdout: 'a\u001b]0;pwned\u0007b\n', stderr: '' });
    const lines = resultLines({ tool: 'shell', args: {}, ok: true, content }) ?? [];
    expect(lines.join('\n')).not.toContain('\u001b');
    expect(lines[1]).toBe('    │ a\\x1b]0;pwned\\x07b');
  });

  it('a write: lines added and removed from the approval diff, else the new content’s lines', () => {
    const diff = '--- a\n+++ a\n@@ -1,3 +1,2 @@\n-old1\n-old2\n-old3\n+new\n keep';
    expect(diffCounts(diff)).toEqual({ added: 1, removed: 3 });
    const content = shell({ path: '/w/NOTES.md', created: false, bytes: 4 });
    expect(
      resultLines({
        tool: 'write_file',
        args: { path: 'NOTES.md', content: 'new\n' },
        ok: true,
        content,
        diff,
      }),
    ).toEqual(['  ✓ wrote NOTES.md (+1 −3)']);
    const created = shell({ path: '/w/a.md', created: true, bytes: 4 });
    expect(
      resultLines({
        tool: 'write_file',
        args: { path: 'a.md', content: 'x\ny\n' },
        ok: true,
        content: created,
      }),
    ).toEqual(['  ✓ wrote a.md (+2)']);
  });

  it('an edit and a read say what changed and how much was read', () => {
    expect(
      resultLines({
        tool: 'edit_file',
        args: { path: 'src/a.ts', old: 'a\nb', new: 'c' },
        ok: true,
        content: shell({ path: '/w/src/a.ts', line: 3, bytes: 10 }),
      }),
    ).toEqual(['  ✓ edited src/a.ts (+1 −2)']);
    const read = (r: Record<string, unknown>) =>
      resultLines({ tool: 'read_file', args: { path: 'src/a.ts' }, ok: true, content: shell(r) });
    expect(read({ path: '/w/src/a.ts', content: '…', startLine: 1, endLine: 240, totalLines: 240 })).toEqual([
      '  ✓ read src/a.ts (240 lines)',
    ]);
    expect(
      read({ path: '/w/src/a.ts', content: '…', startLine: 1, endLine: 3196, totalLines: 90000 }),
    ).toEqual(['  ✓ read src/a.ts (lines 1–3196 of 90000)']);
  });

  it('a failure of another tool is left to the feed’s own failure line', () => {
    const content = shell({ error: { code: 'not_found', message: 'no such file' } });
    expect(resultLines({ tool: 'read_file', args: { path: 'x' }, ok: false, content })).toBeNull();
  });
});

describe('the spinner', () => {
  it('shows the elapsed time on the injected clock, and erases its line when stopped', () => {
    const clock = new SimulatedClock(1_000_000);
    const out: string[] = [];
    const spinner = new Spinner((t) => out.push(t), clock, plain);
    spinner.start();
    expect(out).toEqual([]);
    clock.advance(SPINNER_TICK_MS);
    expect(out.at(-1)).toContain('thinking 0.1s');
    clock.advance(3_000);
    expect(out.at(-1)).toContain('thinking 3.1s');
    spinner.stop();
    expect(out.at(-1)).toBe('\r\u001b[2K');
    expect(clock.pending).toBe(0);
    const before = out.length;
    clock.advance(1_000);
    expect(out.length).toBe(before);
    // Started again, it counts from then.
    spinner.start();
    clock.advance(200);
    expect(out.at(-1)).toContain('thinking 0.2s');
    spinner.stop();
  });
});

describe('input and colours', () => {
  it('a line ending with a backslash goes on on the next line', () => {
    expect(joinContinued(['one'])).toBe('one');
    expect(joinContinued(['one\\'])).toBeNull();
    expect(joinContinued(['one\\', 'two\\', 'three'])).toBe('one\ntwo\nthree');
    expect(words('/inbox deny apr:1 keep it as it is', 3)).toEqual([
      '/inbox',
      'deny',
      'apr:1',
      'keep it as it is',
    ]);
  });

  it('NO_COLOR (non-empty) and --no-color turn colours off; an empty NO_COLOR does not', () => {
    expect(paintFor(true, false, {})).toBe(ansi);
    expect(paintFor(true, false, { NO_COLOR: '1' })).toBe(plain);
    expect(paintFor(true, false, { NO_COLOR: '' })).toBe(ansi);
    expect(paintFor(true, true, {})).toBe(plain);
    expect(paintFor(false, false, {})).toBe(plain);
    expect(plain.red('x')).toBe('x');
    expect(ansi.red('x')).toBe('\u001b[31mx\u001b[39m');
  });
});

describe('the line history', () => {
  it('persists entries (multi-line ones too) in a 0600 file, newest first, without repeats, capped', () => {
    const dir = mkdtempSync(join(tmpdir(), 'snotra-history-'));
    try {
      const a = new ChatHistory(dir);
      a.add('first');
      a.add('two\nlines');
      a.add('two\nlines');
      a.add('   ');
      const file = join(dir, HISTORY_FILE);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(new ChatHistory(dir).newestFirst()).toEqual(['two\nlines', 'first']);
      // A damaged line is skipped, not fatal.
      writeFileSync(file, `${readFileSync(file, 'utf8')}not json\n42\n`);
      const b = new ChatHistory(dir);
      expect(b.newestFirst()).toEqual(['two\nlines', 'first']);
      for (let i = 0; i < HISTORY_MAX + 5; i++) b.add(`entry ${i}`);
      const c = new ChatHistory(dir).newestFirst();
      expect(c).toHaveLength(HISTORY_MAX);
      expect(c[0]).toBe(`entry ${HISTORY_MAX + 4}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
