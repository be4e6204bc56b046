/**
 * `snotra completion bash|zsh|fish`: made from the command specs the commander program is built
 * from, so every command, subcommand and flag of `snotra --help` completes (structure checked
 * here for every shell; test/cli/completion-shells.test.ts runs the shells that are installed).
 */
import { describe, expect, it } from 'vitest';
import { COMMAND_SPECS, GROUPS } from '../../surfaces/cli/commands.ts';
import { bashScript, fishScript, zshScript } from '../../surfaces/cli/completion/scripts.ts';
import { completionTree } from '../../surfaces/cli/completion/tree.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const tree = completionTree(COMMAND_SPECS, GROUPS);
const longFlags = (flags: string): string[] => flags.split(/[ ,|]+/).filter((f) => f.startsWith('--'));

describe('the completion tree is the command specs', () => {
  it('every command and group at the top, every subcommand under its group, every long flag under its command', () => {
    const top = tree.top.map((w) => w.name);
    for (const spec of COMMAND_SPECS) {
      expect(top).toContain(spec.path[0]);
      if (spec.path.length > 1)
        expect(tree.groups.get(spec.path[0] as string)?.map((w) => w.name)).toContain(spec.path[1]);
      const flags = tree.flags.get(spec.path.join(' '))?.map((w) => w.name) ?? [];
      for (const [f] of spec.options) for (const name of longFlags(f)) expect(flags).toContain(name);
      expect(flags).toContain('--help');
    }
    expect(top).toContain('completion');
    expect(new Set(top).size).toBe(top.length);
  });

  it('a summary with quotes, a backslash or a dollar cannot break out of its quoting', () => {
    const hostile = completionTree(
      [{ path: ['x'], summary: `it's \\ "$(rm -rf ~)" \`id\``, options: [['--y V', `a 'b' $HOME`]] }],
      {},
    );
    // Summaries appear only quoted: zsh and fish in single quotes (with ' escaped), bash not at all.
    expect(bashScript(hostile)).not.toContain('rm -rf');
    expect(zshScript(hostile)).toContain(`'x              -- it'\\''s \\ "$(rm -rf ~)" \`id\`'`);
    expect(fishScript(hostile)).toContain(`-d 'it\\'s \\\\ "$(rm -rf ~)" \`id\`'`);
  });
});

describe('each shell’s script names every word', () => {
  const scripts = { bash: bashScript(tree), zsh: zshScript(tree), fish: fishScript(tree) };
  it.each(Object.entries(scripts))('%s', (shell, script) => {
    for (const w of tree.top) expect(script, w.name).toMatch(new RegExp(`(^|[ "(])${w.name}([ ")]|$)`, 'm'));
    for (const [group, subs] of tree.groups) {
      expect(script).toContain(group);
      for (const w of subs) expect(script).toContain(w.name);
    }
    for (const [path, flags] of tree.flags)
      for (const f of flags)
        expect(script, `${path} ${f.name}`).toContain(shell === 'fish' ? `-l ${f.name.slice(2)}` : f.name);
    if (shell === 'bash') expect(script).toMatch(/^complete -o default -F _snotra snotra$/m);
    if (shell === 'zsh') expect(script).toMatch(/^#compdef snotra\n/);
    if (shell === 'fish') expect(script).toMatch(/^complete -c snotra -n __fish_use_subcommand -a start /m);
  });

  it('quotes balance in every line of the zsh and fish scripts (single quotes, escapes counted)', () => {
    for (const line of scripts.fish.split('\n')) {
      const bare = line.replace(/\\\\/g, '').replace(/\\'/g, '');
      expect((bare.match(/'/g) ?? []).length % 2, line).toBe(0);
    }
    for (const line of scripts.zsh.split('\n')) {
      const bare = line.replace(/'\\''/g, '');
      expect((bare.match(/'/g) ?? []).length % 2, line).toBe(0);
    }
  });
});

describe('snotra completion', () => {
  it('prints the script of the shell asked for', async () => {
    for (const [shell, script] of [
      ['bash', bashScript(tree)],
      ['zsh', zshScript(tree)],
      ['fish', fishScript(tree)],
    ] as const) {
      const r = await runCliInProcess(['completion', shell], process.cwd());
      expect(r).toEqual({ code: 0, out: script, err: '' });
    }
  });

  it('an unknown, missing or extra shell is a usage error naming the shells', async () => {
    for (const argv of [['powershell'], [], ['bash', 'zsh'], ['--shell=bash']]) {
      const r = await runCliInProcess(['completion', ...argv], process.cwd());
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain('snotra completion bash|zsh|fish');
    }
  });
});
