/**
 * The CLI reads a plain command line (a leaf command and its own long flags) without commander;
 * everything else goes through commander. The law: whenever the plain reading answers, commander
 * gives the same command and the same arguments, and prints nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMMAND_SPECS } from '../../surfaces/cli/commands.ts';
import type { CliIo } from '../../surfaces/cli/io.ts';
import { parseWithCommander, plainCommandLine, type Parsed } from '../../surfaces/cli/program.ts';
import { runs } from '../support/laws.ts';

async function viaCommander(argv: string[]): Promise<{ parsed: Parsed | { error: string }; out: string }> {
  let out = '';
  const io: CliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (out += t),
    stdinLines: async function* () {},
  };
  try {
    return { parsed: await parseWithCommander(argv, io), out };
  } catch (err) {
    return { parsed: { error: (err as Error).message }, out };
  }
}

const longFlags = [
  ...new Set(COMMAND_SPECS.flatMap((s) => s.options.flatMap(([f]) => f.split(/[ ,]+/)))),
].filter((f) => f.startsWith('-'));
const word = fc.oneof(
  fc.constantFrom(...longFlags),
  fc.constantFrom(
    '--help',
    '-h',
    '-V',
    '--version',
    '--',
    'help',
    '-',
    '-x',
    '--jsn',
    '--json=1',
    '--tool=shell',
  ),
  fc.constantFrom('read_file', '{"path":"a.txt"}', 'check', 'policy', 'start', 'summarize README.md', '-1'),
);
const start = fc.oneof(
  fc.constantFrom(...COMMAND_SPECS.map((s) => [...s.path])),
  fc.constantFrom(
    ['policy'],
    ['help'],
    ['help', 'policy', 'check'],
    ['polcy', 'check'],
    ['policy', 'chek'],
    [],
  ),
);

describe('the plain command line', () => {
  it('answers only where commander gives the same command and arguments', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(start, fc.array(word, { maxLength: 6 }), async (head, rest) => {
        const argv = [...head, ...rest];
        const plain = plainCommandLine(argv);
        if (plain === null) return;
        answered++;
        const { parsed, out } = await viaCommander(argv);
        expect(parsed).toEqual(plain);
        if (plain.kind === 'run' && 'spec' in parsed && parsed.kind === 'run')
          expect(parsed.spec).toBe(plain.spec);
        expect(out).toBe('');
      }),
      { numRuns: runs(400) },
    );
    // The law was tested on many plain lines, not just vacuously.
    expect(answered).toBeGreaterThan(40);
  });

  it('reads the usual policy check and start lines without commander', () => {
    const check = COMMAND_SPECS.find((s) => s.path.join(' ') === 'policy check');
    for (const argv of [
      ['policy', 'check', '--tool', 'read_file', '--args', '{"path":"notes.txt"}', '--json'],
      ['policy', 'check', '--stdin', '--json', '--agent=assistant'],
      ['policy', 'check', '--tool', 'shell', '--args', '{"command":"ls"}', '--', '--help'],
    ])
      expect(plainCommandLine(argv)).toEqual({ kind: 'run', spec: check, argv: argv.slice(2) });
    expect(plainCommandLine(['start', '--log-level', 'warn'])).toMatchObject({ kind: 'run' });
  });

  it('leaves help, version, short and unknown flags and misspelt commands to commander', () => {
    for (const argv of [
      [],
      ['--help'],
      ['--version'],
      ['help', 'policy', 'check'],
      ['policy'],
      ['policy', 'chek', '--tool', 'x'],
      ['policy', 'check', '--help'],
      ['policy', 'check', '-h'],
      ['policy', 'check', '--version'],
      ['policy', 'check', '-V'],
      ['policy', 'check', '--jsn'],
      ['policy', 'check', '--tool', '-x'],
      ['strat'],
    ])
      expect(plainCommandLine(argv)).toBeNull();
  });
});
