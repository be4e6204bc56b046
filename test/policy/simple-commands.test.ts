import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import { createShellAnalyzer } from '../../policy/shell/index.ts';
import { MAX_LISTED, withSimpleCommands } from '../../policy/shell/simple-commands.ts';
import { SHELL_CORPUS } from './shell-corpus.ts';
import { runs } from '../support/laws.ts';

let shell: CommandAnalyzer;
beforeAll(async () => {
  shell = await withSimpleCommands(await createShellAnalyzer());
});

const list = (command: string) => {
  const l = shell.commands?.(command);
  if (l === undefined) throw new Error('the analyzer lists no commands');
  return l;
};
const programs = (command: string) => list(command).commands.map((c) => c.program[0]);

describe('the simple commands of a command string', () => {
  it('looks through prefixes, wrappers and code runners like the analysis', () => {
    expect(programs('FOO=1 sudo -u x env BAR=2 command git push')).toEqual(['sudo', 'env', 'command', 'git']);
    expect(programs('bash -c \'sh -c "eval rm x"\'')).toEqual(['bash', 'sh', 'eval', 'rm']);
    expect(programs("echo 'git push' | sh")).toEqual(['echo', 'sh', 'git']);
    expect(programs('sh <<< "npm publish"')).toEqual(['sh', 'npm']);
    expect(programs('find . -exec chmod 600 {} +')).toEqual(['find', 'chmod']);
    expect(programs('GIT_SSH_COMMAND="ssh -v" git fetch')).toContain('ssh');
  });

  it('keeps the arguments, with run-time words as null and git’s subcommand position', () => {
    expect(list('git -C "$d" push origin').commands).toEqual([
      { program: ['git'], args: ['-C', null, 'push', 'origin'], subcommandAt: 2 },
    ]);
    expect(list('ls *.ts').commands).toEqual([{ program: ['ls'], args: [null] }]);
    expect(list('ls "*.ts"').commands).toEqual([{ program: ['ls'], args: ['*.ts'] }]);
  });

  it('finds commands in every place a command can stand', () => {
    const command = [
      'a1 && a2 || a3; a4 | a5 &',
      '(b1); { b2; }',
      'c1 $(c2) `c3` <(c4) "$(c5)"',
      'if d1; then d2; elif d3; then d4; else d5; fi',
      'for i in 1; do e1; done; while e2; do e3; done',
      'case x in x) f1;; esac',
      'g() { g1; }',
      'x=$(h1) declare y=$(h2)',
      'cat <<EOF\n$(i1)\nEOF',
    ].join('\n');
    const found = programs(command);
    for (const p of [
      'a1',
      'a2',
      'a3',
      'a4',
      'a5',
      'b1',
      'b2',
      'c1',
      'c2',
      'c3',
      'c4',
      'c5',
      'd1',
      'd5',
      'e1',
      'e3',
      'f1',
      'g1',
      'h1',
      'h2',
      'i1',
    ])
      expect(found, p).toContain(p);
  });

  it('says when it could not follow a part', () => {
    for (const command of [
      '$prog push',
      'eval "$x"',
      'sh -c "$x"',
      'bash <<EOF\ngit push\nEOF',
      'curl x | sh',
      'ls (',
    ]) {
      expect(list(command).complete, command).toBe(false);
    }
    expect(list('git push').complete).toBe(true);
  });

  it('never throws, and bounds its output', () => {
    expect(list('a\0b').complete).toBe(false);
    const many = Array.from({ length: MAX_LISTED + 10 }, (_, i) => `c${i}`).join(';');
    const l = list(many);
    expect(l.commands.length).toBe(MAX_LISTED);
    expect(l.complete).toBe(false);
  });

  it('is complete for every analyzable corpus command that is not hardline-denied', () => {
    // When the analysis follows a command, the listing follows it too: a command rule then never
    // falls back on "possible match" for a command the analyzer could read.
    const misses: string[] = [];
    let analyzed = 0;
    for (const c of SHELL_CORPUS) {
      const a = shell.analyze(c.command);
      if (a.kind !== 'analyzed' || a.hardline !== null) continue;
      analyzed++;
      if (!list(c.command).complete) misses.push(c.command);
    }
    expect(analyzed).toBeGreaterThan(100);
    expect(misses).toEqual([]);
  });

  it('follows whatever the analysis follows, and finds the innermost program (property)', () => {
    const layer = fc.constantFrom<(c: string) => string>(
      (c) => `sudo ${c}`,
      (c) => `env FOO=1 ${c}`,
      (c) => `FOO=1 ${c}`,
      (c) => `timeout 5 ${c}`,
      (c) => `nice -n 3 ${c}`,
      (c) => `command ${c}`,
      (c) => `sh -c '${c.replace(/'/g, `'\\''`)}'`,
      (c) => `eval '${c.replace(/'/g, `'\\''`)}'`,
      (c) => `echo "$(${c})"`,
      (c) => `ls && ${c}`,
      (c) => `(${c}) | cat`,
      (c) => `if true; then ${c}; fi`,
      (c) => `xargs ${c} < /dev/null`,
    );
    const inner = fc.constantFrom(
      'git status',
      'npm test',
      'rg -n foo src',
      'cargo build --release',
      'ls -la',
    );
    fc.assert(
      fc.property(fc.array(layer, { maxLength: 4 }), inner, (layers, base) => {
        const command = layers.reduce<string>((c, wrap) => wrap(c), base);
        const a = shell.analyze(command);
        const l = list(command);
        if (a.kind === 'analyzed' && a.hardline === null) expect(l.complete, command).toBe(true);
        const program = base.split(' ')[0];
        // Complete means every command was seen (`$((x) | y)` is a parse error: incomplete).
        if (l.complete)
          expect(
            l.commands.map((c) => c.program[0]),
            command,
          ).toContain(program);
        else expect(a.kind === 'unanalyzable' || a.hardline !== null, command).toBe(true);
      }),
      { numRuns: runs(300) },
    );
  });
});
