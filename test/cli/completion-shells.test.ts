/**
 * The completion scripts parse in their shells, and bash's completes: `bash -n`, and a real
 * bash asked what follows `snotra in`, `snotra inbox ` and `snotra inbox list --`. zsh and fish
 * run when installed (they are not on this project's machine image: their scripts' structure is
 * checked in completion.test.ts, always).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { COMMAND_SPECS, GROUPS } from '../../surfaces/cli/commands.ts';
import { bashScript, fishScript, zshScript } from '../../surfaces/cli/completion/scripts.ts';
import { completionTree } from '../../surfaces/cli/completion/tree.ts';

const tree = completionTree(COMMAND_SPECS, GROUPS);

function installed(shell: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${shell}`], { encoding: 'utf8' }).status === 0;
}

function run(
  shell: string,
  args: string[],
  input: string,
): { status: number | null; out: string; err: string } {
  const r = spawnSync(shell, args, { input, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** What bash's completion offers for the words typed so far (the last one being completed). */
function bashComplete(words: string[]): string[] {
  const script = `${bashScript(tree)}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_snotra; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = run('bash', ['--norc', '--noprofile'], script);
  expect(r.err).toBe('');
  return r.out.split('\n').filter((l) => l !== '');
}

describe('bash', () => {
  it('parses (bash -n)', () => {
    const r = run('bash', ['-n'], bashScript(tree));
    expect(r).toMatchObject({ status: 0, err: '' });
  });

  it('completes commands, subcommands and a command’s flags', () => {
    expect(bashComplete(['snotra', 'in'])).toEqual(['inbox', 'init', 'inspect']);
    expect(bashComplete(['snotra', 'inbox', ''])).toEqual(['list', 'show', 'approve', 'deny']);
    const flags = bashComplete(['snotra', 'inbox', 'list', '--']);
    expect(flags).toContain('--json');
    expect(flags).toContain('--help');
    expect(bashComplete(['snotra', 'run', '--ag'])).toEqual(['--agent']);
  });
});

describe.each([
  ['zsh', zshScript(tree)],
  ['fish', fishScript(tree)],
] as const)('%s', (shell, script) => {
  it(installed(shell) ? 'parses (-n)' : 'is not installed here: its structure is checked instead', () => {
    if (!installed(shell)) {
      // Without the shell: the script's shape, line by line (and completion.test.ts's checks).
      const lines = script.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
      if (shell === 'fish') for (const l of lines) expect(l).toMatch(/^complete -c snotra( |$)/);
      else {
        const opens = lines.filter((l) => /(\{|\bcase\b.*\bin|; then)$/.test(l.trim())).length;
        const closes = lines.filter((l) => /^(\}|esac|fi)$/.test(l.trim())).length;
        expect(opens).toBe(closes);
        expect(script).toMatch(/^_snotra\(\) \{$/m);
      }
      return;
    }
    const r = run(shell, ['-n'], script);
    expect(r).toMatchObject({ status: 0, err: '' });
  });
});
