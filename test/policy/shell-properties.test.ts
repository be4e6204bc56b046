import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandAnalysis, CommandAnalyzer } from '../../policy/seams.ts';
import { createShellAnalyzer } from '../../policy/shell/index.ts';
import { runs } from '../support/laws.ts';

let analyzer: CommandAnalyzer;
beforeAll(async () => {
  analyzer = await createShellAnalyzer({ cacheSize: 0 });
});

const RUNS = { numRuns: runs(300) };

/** Simple hardline commands (no compound syntax) with the rule each must keep. */
const HARDLINE: readonly (readonly [string, string])[] = [
  ['rm -rf /', 'hardline.rm-recursive-root'],
  ['rm -fr ~', 'hardline.rm-recursive-home'],
  ['rm -r --force /etc', 'hardline.rm-recursive-system'],
  ['find / -delete', 'hardline.find-delete-protected'],
  ['mkfs.ext4 /dev/sda1', 'hardline.mkfs'],
  ['dd if=/dev/zero of=/dev/sda', 'hardline.dd-device'],
  ['fdisk /dev/sda', 'hardline.partition-table'],
  ['wipefs -a /dev/sda', 'hardline.wipefs'],
  ['shred /dev/sda', 'hardline.shred-device'],
  ['diskutil eraseDisk JHFS+ x disk2', 'hardline.diskutil-erase'],
  ['diskpart', 'hardline.diskpart'],
  ['Clear-Disk -Number 1', 'hardline.powershell-disk-destroy'],
  ['echo x > /dev/sda', 'hardline.block-device-redirect'],
  ['tee /dev/nvme0n1', 'hardline.block-device-write'],
  ['chmod -R 777 /', 'hardline.chmod-recursive-protected'],
  ['chown -R nobody /usr', 'hardline.chown-recursive-protected'],
  ['shutdown -h now', 'hardline.system-shutdown'],
  ['reboot', 'hardline.system-shutdown'],
  ['kill -9 -1', 'hardline.kill-all-processes'],
  ['git push --force origin main', 'hardline.git-push-force'],
  ['git push origin +main', 'hardline.git-push-force-refspec'],
  ['git filter-branch HEAD', 'hardline.git-filter-branch'],
  ['git filter-repo --force', 'hardline.git-filter-repo'],
  ['rd /s /q C:/Windows', 'hardline.windows-recursive-delete'],
  ['Remove-Item -Recurse -Force C:/', 'hardline.remove-item-recursive'],
  ['reg delete HKLM/Software/X /f', 'hardline.registry-delete-hklm'],
];

const BENIGN = [
  'ls -la',
  'echo hi',
  'git status',
  'npm test',
  'cat README.md',
  'pwd',
  'true',
  'make build',
  'grep -r foo src',
  'node --version',
  'rm -rf build',
  'git push origin main',
];

const WRAPPERS = [
  'sudo',
  'sudo -u root',
  'sudo -E --',
  'doas',
  'env',
  'env -i',
  'env FOO=1',
  'nohup',
  'nice',
  'nice -n 5',
  'timeout 10',
  'timeout -s KILL 5',
  'stdbuf -oL',
  'command',
  'builtin command',
  'exec',
  'time',
  'time -p',
  'setsid',
  'FOO=bar',
  'ionice -c3',
  'xargs',
  'xargs -r',
];

/** Single-quotes a string for bash. */
function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Compound forms around an inner command `s`, with a benign command `b`. */
const FORMS: readonly ((s: string, b: string) => string)[] = [
  (s, b) => `${b}; ${s}`,
  (s, b) => `${b} && ${s}`,
  (s, b) => `${b} || ${s}`,
  (s, b) => `${b} | ${s}`,
  (s, b) => `${s} | ${b}`,
  (s, b) => `${b}\n${s}`,
  (s) => `${s} &`,
  (s, b) => `${b} & ${s}`,
  // Spaces inside the parentheses: `((x))` and `$((x))` are arithmetic in bash, not commands.
  (s) => `( ${s} )`,
  (s) => `{ ${s}; }`,
  (s) => `echo $( ${s} )`,
  (s) => `echo "$( ${s} )"`,
  (s) => `cat <(${s})`,
  (s) => `bash -c ${shq(s)}`,
  (s) => `sh -c ${shq(s)}`,
  (s) => `eval ${shq(s)}`,
  (s) => `for i in 1 2; do ${s}; done`,
  (s) => `while true; do ${s}; done`,
  (s, b) => `until ${b}; do ${s}; done`,
  (s, b) => `if ${b}; then ${s}; fi`,
  (s, b) => `if ${b}; then :; else ${s}; fi`,
  (s) => `case x in *) ${s};; esac`,
  (s) => `f() { ${s}; }; f`,
  (s) => `! ${s}`,
];

function describeResult(a: CommandAnalysis): string {
  if (a.kind === 'unanalyzable') return `unanalyzable ${a.ruleId}`;
  return a.hardline ? `hardline ${a.hardline.ruleId}` : 'ok';
}

describe('shell analysis properties', () => {
  it('a hardline command inside wrappers and compound forms is never ok', () => {
    const arb = fc.record({
      hard: fc.constantFrom(...HARDLINE),
      wrappers: fc.array(fc.constantFrom(...WRAPPERS), { maxLength: 4 }),
      forms: fc.array(fc.record({ form: fc.constantFrom(...FORMS), benign: fc.constantFrom(...BENIGN) }), {
        maxLength: 3,
      }),
    });
    fc.assert(
      fc.property(arb, ({ hard, wrappers, forms }) => {
        let command = [...wrappers, hard[0]].join(' ');
        for (const { form, benign } of forms) command = form(command, benign);
        const a = analyzer.analyze(command);
        const ok = a.kind === 'analyzed' && a.hardline === null;
        if (ok) throw new Error(`ok for ${JSON.stringify(command)}`);
      }),
      RUNS,
    );
  });

  it('a hardline command inside wrappers keeps its rule id', () => {
    const arb = fc.record({
      hard: fc.constantFrom(...HARDLINE),
      wrappers: fc.array(fc.constantFrom(...WRAPPERS.filter((w) => !w.startsWith('xargs'))), {
        maxLength: 4,
      }),
    });
    fc.assert(
      fc.property(arb, ({ hard, wrappers }) => {
        const command = [...wrappers, hard[0]].join(' ');
        expect(describeResult(analyzer.analyze(command))).toBe(`hardline ${hard[1]}`);
      }),
      RUNS,
    );
  });

  it('quoting the words of a hardline command does not change the verdict', () => {
    const quoteWord = (w: string, how: number): string => {
      switch (how) {
        case 0:
          return w;
        case 1:
          return shq(w);
        case 2:
          return `"${w}"`;
        case 3:
          return w.length > 1 ? `${w.slice(0, 1)}""${w.slice(1)}` : w;
        case 4:
          return w.replace(/[a-z]/g, (c) => `\\${c}`);
        default:
          return `$'${w}'`;
      }
    };
    const plain = HARDLINE.filter(([c]) => !/[~*?[{$>]/.test(c));
    const arb = fc.record({
      hard: fc.constantFrom(...plain),
      quoting: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 8, maxLength: 8 }),
    });
    fc.assert(
      fc.property(arb, ({ hard, quoting }) => {
        const words = hard[0].split(' ').map((w, i) => quoteWord(w, quoting[i] ?? 0));
        expect(describeResult(analyzer.analyze(words.join(' ')))).toBe(`hardline ${hard[1]}`);
      }),
      RUNS,
    );
  });

  it('a dynamic program name is never ok', () => {
    const dynamic = ['$x', '${X}', '$(echo rm)', '`echo rm`', '"$CMD"', '${A}rm', '$1', '/bin/r?'];
    fc.assert(
      fc.property(fc.constantFrom(...dynamic), fc.constantFrom(...BENIGN, 'rm -rf /'), (d, rest) => {
        const a = analyzer.analyze(`${d} ${rest.split(' ').slice(1).join(' ')}`);
        expect(a.kind === 'analyzed' && a.hardline === null).toBe(false);
      }),
      RUNS,
    );
  });

  it('never throws and always returns a well-formed result on arbitrary strings', () => {
    const check = (s: string): void => {
      const a = analyzer.analyze(s);
      if (a.kind === 'unanalyzable') {
        expect(a.ruleId).toMatch(/^unanalyzable\./);
      } else {
        expect(a.kind).toBe('analyzed');
        expect(Array.isArray(a.reads) && Array.isArray(a.writes)).toBe(true);
        if (a.hardline) expect(a.hardline.ruleId).toMatch(/^hardline\./);
      }
    };
    fc.assert(fc.property(fc.string({ maxLength: 200 }), check), { numRuns: runs(500) });
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), check), { numRuns: runs(300) });
    // fast-check 4 spells fullUnicodeString as string({ unit: 'binary' }).
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), check), { numRuns: runs(300) });
  });

  it('never throws on shell-token soup', () => {
    const tokens = [
      'rm',
      '-rf',
      '/',
      '~',
      '|',
      '||',
      '&&',
      ';',
      '&',
      '$(',
      ')',
      '(',
      '`',
      '"',
      "'",
      '{',
      '}',
      '<<',
      '<<<',
      'EOF',
      '\n',
      '\\',
      '\\\n',
      '>',
      '>&',
      '2>&1',
      '<(',
      'bash -c',
      'eval',
      'sudo',
      'xargs',
      '$x',
      '${x}',
      '*',
      '{a,b}',
      '{1..3}',
      "$'\\x41'",
      'case',
      'esac',
      'in',
      'do',
      'done',
      'then',
      'fi',
      'f()',
      'cd',
      '..',
      'find',
      '-exec',
      '{}',
      '\\;',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...tokens), { maxLength: 40 }), fc.boolean(), (parts, spaced) => {
        const s = parts.join(spaced ? ' ' : '');
        expect(() => analyzer.analyze(s)).not.toThrow();
      }),
      { numRuns: runs(500) },
    );
  });
});
