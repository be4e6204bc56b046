import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import { decodeAnsiC } from '../../policy/shell/syntax/ansi-c.ts';
import { braceExpand, ExpansionLimitError } from '../../policy/shell/syntax/brace.ts';
import { fieldFromAtoms, literalField } from '../../policy/shell/syntax/field.ts';
import type { Atom } from '../../policy/shell/syntax/field.ts';
import {
  createShellAnalyzer,
  HARDLINE_RULES,
  MAX_COMMAND_LENGTH,
  UNANALYZABLE_RULES,
} from '../../policy/shell/index.ts';
import { Lru } from '../../policy/shell/lru.ts';
import { hasFlag, parseOptions } from '../../policy/shell/programs/options.ts';
import { loadBashLanguage } from '../../policy/shell/syntax/parser.ts';
import {
  classifyPosix,
  classifyWindows,
  deviceKind,
  normalizePosix,
} from '../../policy/shell/effects/paths.ts';
import { programNames } from '../../policy/shell/programs/names.ts';

let analyzer: CommandAnalyzer;
beforeAll(async () => {
  analyzer = await createShellAnalyzer();
});

const unquoted = (s: string): Atom[] => [...s].map((c) => ({ k: 'c', c, q: false, w: c }));
const values = (s: string): (string | null)[] => braceExpand(unquoted(s)).map((a) => fieldFromAtoms(a).value);
const lits = (...words: string[]) => words.map(literalField);

describe('rule ids', () => {
  it('are unique, stable-prefixed and kebab-case', () => {
    const hard = HARDLINE_RULES.map((r) => r.id);
    const unan = UNANALYZABLE_RULES.map((r) => r.id);
    expect(new Set([...hard, ...unan]).size).toBe(hard.length + unan.length);
    for (const id of hard) expect(id).toMatch(/^hardline\.[a-z0-9-]+$/);
    for (const id of unan) expect(id).toMatch(/^unanalyzable\.[a-z0-9-]+$/);
  });
});

describe('ANSI-C strings', () => {
  it('decodes escapes as bash does', () => {
    expect(decodeAnsiC('\\x72\\x6d')).toBe('rm');
    expect(decodeAnsiC('\\162\\155')).toBe('rm');
    expect(decodeAnsiC('\\u0072m')).toBe('rm');
    expect(decodeAnsiC('a\\nb\\tc')).toBe('a\nb\tc');
    expect(decodeAnsiC("it\\'s")).toBe("it's");
    expect(decodeAnsiC('\\q')).toBe('\\q');
    expect(decodeAnsiC('a\\x00b')).toBe('a');
  });
});

describe('brace expansion', () => {
  it('expands lists, sequences and nesting', () => {
    expect(values('/{etc,usr}')).toEqual(['/etc', '/usr']);
    expect(values('a{b,c{d,e}}f')).toEqual(['abf', 'acdf', 'acef']);
    expect(values('{1..3}')).toEqual(['1', '2', '3']);
    expect(values('{a..e..2}')).toEqual(['a', 'c', 'e']);
    expect(values('{01..03}')).toEqual(['01', '02', '03']);
    expect(values('{rm,-rf,/}')).toEqual(['rm', '-rf', '/']);
    expect(values('{a}')).toEqual(['{a}']);
    expect(values('/{,}')).toEqual(['/', '/']);
  });
  it('leaves quoted braces alone', () => {
    const atoms: Atom[] = [...'{a,b}'].map((c) => ({ k: 'c', c, q: true, w: c }));
    expect(braceExpand(atoms).map((a) => fieldFromAtoms(a).value)).toEqual(['{a,b}']);
  });
  it('is bounded', () => {
    expect(() => values('{1..100000}')).toThrow(ExpansionLimitError);
    expect(() => values('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}')).toThrow(ExpansionLimitError);
  });
});

describe('protected paths', () => {
  it('classifies roots, homes and system directories', () => {
    expect(classifyPosix('/', false)).toBe('root');
    expect(classifyPosix('//', false)).toBe('root');
    expect(classifyPosix('/tmp/..', false)).toBe('root');
    expect(classifyPosix('/*', false)).toBe('root');
    expect(classifyPosix('~', true)).toBe('home');
    expect(classifyPosix('~/*', true)).toBe('home');
    expect(classifyPosix('~/..', true)).toBe('home');
    expect(classifyPosix('~bob', true)).toBe('home');
    expect(classifyPosix('/home/bob', false)).toBe('home');
    expect(classifyPosix('/etc', false)).toBe('system');
    expect(classifyPosix('/ETC/', false)).toBe('system');
    expect(classifyPosix('/e?c', false)).toBe('system');
    expect(classifyPosix('/etc/*', false)).toBe('system');
    expect(classifyPosix('/Library', false)).toBe('system');
  });
  it('does not classify ordinary paths', () => {
    expect(classifyPosix('build', false)).toBeNull();
    expect(classifyPosix('~/project/build', true)).toBeNull();
    expect(classifyPosix('~', false)).toBeNull();
    expect(classifyPosix('/tmp/x', false)).toBeNull();
    expect(classifyPosix('/etc/nginx', false)).toBeNull();
    expect(classifyPosix('/etc/\\*', false)).toBeNull();
    expect(classifyPosix('../..', false)).toBeNull();
  });
  it('classifies Windows paths', () => {
    expect(classifyWindows('C:\\')).toBe('root');
    expect(classifyWindows('c:/')).toBe('root');
    expect(classifyWindows('D:')).toBe('root');
    expect(classifyWindows('C:\\*')).toBe('root');
    expect(classifyWindows('C:\\Windows\\')).toBe('system');
    expect(classifyWindows('C:\\Program Files')).toBe('system');
    expect(classifyWindows('C:\\Users\\bob')).toBe('home');
    expect(classifyWindows('%USERPROFILE%')).toBe('home');
    expect(classifyWindows('%SystemRoot%\\')).toBe('system');
    expect(classifyWindows('\\\\?\\C:\\')).toBe('root');
    expect(classifyWindows('C:\\Users\\bob\\project\\build')).toBeNull();
  });
  it('recognizes devices and the harmless ones', () => {
    expect(deviceKind('/dev/sda')).toBe('device');
    expect(deviceKind('/dev/nvme0n1')).toBe('device');
    expect(deviceKind('/dev/disk0')).toBe('device');
    expect(deviceKind('/dev/../dev/sda')).toBe('device');
    expect(deviceKind('/proc/sysrq-trigger')).toBe('device');
    expect(deviceKind('/dev/null')).toBe('benign');
    expect(deviceKind('/dev/stderr')).toBe('benign');
    expect(deviceKind('/dev/fd/2')).toBe('benign');
    expect(deviceKind('/dev/tty')).toBe('benign');
    expect(deviceKind('/dev/nul?', true)).toBe('device');
    expect(deviceKind('build/dev/sda')).toBeNull();
    expect(deviceKind('\\\\.\\PhysicalDrive0')).toBe('device');
  });
  it('normalizes lexically', () => {
    expect(normalizePosix('/a//b/./c/..')).toBe('/a/b');
    expect(normalizePosix('/..')).toBe('/');
    expect(normalizePosix('a/../..')).toBe('..');
  });
});

describe('option parsing', () => {
  it('normalizes flag spellings', () => {
    for (const args of [
      ['-rf', '/'],
      ['-fr', '/'],
      ['-r', '-f', '/'],
      ['--recursive', '--force', '/'],
      ['/', '-rf'],
    ]) {
      const p = parseOptions(lits(...args), { longFlags: ['recursive', 'force'] });
      expect(hasFlag(p, 'r', 'recursive') && hasFlag(p, 'f', 'force')).toBe(true);
      expect(p.operands.map((o) => o.value)).toEqual(['/']);
    }
  });
  it('resolves unique abbreviations and stops at --', () => {
    const p = parseOptions(lits('--rec', '--', '-rf'), { longFlags: ['recursive', 'force'] });
    expect(hasFlag(p, 'recursive')).toBe(true);
    expect(p.operands.map((o) => o.value)).toEqual(['-rf']);
  });
  it('takes attached and separate values', () => {
    const p = parseOptions(lits('-uroot', '-g', 'wheel', 'cmd'), { shortValue: 'ug', stopAtOperand: true });
    expect(p.flags.get('u')?.[0]?.value).toBe('root');
    expect(p.flags.get('g')?.[0]?.value).toBe('wheel');
    expect(p.rest).toBe(3);
  });
});

describe('program identity', () => {
  it('is the case-folded basename', () => {
    expect(programNames(literalField('/bin/rm'))).toEqual(['rm']);
    expect(programNames(literalField('RM.EXE'))).toEqual(['rm']);
    expect(
      programNames({ ...literalField('C:WindowsSystem32cmd.exe'), win: 'C:\\Windows\\System32\\cmd.exe' }),
    ).toContain('cmd');
  });
});

describe('LRU', () => {
  it('evicts the least recently used entry', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.size).toBe(2);
  });
});

describe('analyzer contract', () => {
  it('loads the grammar once', async () => {
    expect(loadBashLanguage()).toBe(loadBashLanguage());
    await createShellAnalyzer();
  });

  it('never throws and fails closed on bad input', () => {
    const bad = analyzer.analyze(42 as unknown as string);
    expect(bad).toMatchObject({ kind: 'unanalyzable', ruleId: 'unanalyzable.internal-error' });
    expect(analyzer.analyze('x'.repeat(MAX_COMMAND_LENGTH + 1))).toMatchObject({
      ruleId: 'unanalyzable.input-too-large',
    });
    expect(analyzer.analyze('ls\0rm')).toMatchObject({ ruleId: 'unanalyzable.parse-error' });
    expect(analyzer.analyze('('.repeat(20_000))).toMatchObject({ kind: 'unanalyzable' });
    expect(analyzer.analyze('$('.repeat(5_000))).toMatchObject({ kind: 'unanalyzable' });
    expect(analyzer.analyze('echo {1..9}{1..9}{1..9}{1..9}')).toMatchObject({
      ruleId: 'unanalyzable.limit-exceeded',
    });
  });

  it('returns frozen, cached results', () => {
    const a = analyzer.analyze('cat a > b');
    expect(Object.isFrozen(a)).toBe(true);
    expect(analyzer.analyze('cat a > b')).toBe(a);
  });

  it('reports reads and writes of common commands', () => {
    const a = analyzer.analyze(
      'cat ~/notes.txt src/a.ts | grep -n x > out.txt; cp a b dst/; sed -i s/a/b/ f.txt',
    );
    expect(a).toMatchObject({ kind: 'analyzed', hardline: null });
    if (a.kind !== 'analyzed') return;
    expect([...a.reads].sort()).toEqual(['a', 'b', 'src/a.ts', '~/notes.txt']);
    expect([...a.writes].sort()).toEqual(['dst/', 'f.txt', 'out.txt']);
  });

  it('keeps a hardline match when another part is unanalyzable', () => {
    expect(analyzer.analyze('eval "$x"; rm -rf /')).toMatchObject({
      kind: 'analyzed',
      hardline: { ruleId: 'hardline.rm-recursive-root' },
    });
  });

  it('leaves non-literal write targets of non-content writes out (documented choice)', () => {
    expect(analyzer.analyze('touch "$f" x')).toMatchObject({ kind: 'analyzed', writes: ['x'] });
    expect(analyzer.analyze('cp a "$dest"')).toMatchObject({
      kind: 'unanalyzable',
      ruleId: 'unanalyzable.dynamic-argument',
    });
  });
});
