import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkGitArgs,
  GIT_QUERY_SUBCOMMANDS,
  REFUSED_LONG_OPTIONS,
  REFUSED_SHORT_OPTIONS,
} from '../../policy/git-query-args.ts';
import { runs } from '../support/laws.ts';

/** Every abbreviation git takes (at least 4 characters with the dashes), the whole name included. */
const abbreviations = (o: string) => Array.from({ length: o.length - 3 }, (_, i) => o.slice(0, i + 4));

describe('git_query arguments (policy/git-query-args.ts)', () => {
  it('refuses every refused option, each abbreviation git takes, with or without a value, anywhere after the subcommand', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...GIT_QUERY_SUBCOMMANDS),
        fc.constantFrom(...REFUSED_LONG_OPTIONS),
        fc.nat(),
        fc.boolean(),
        fc.array(fc.constantFrom('--oneline', '--stat', 'HEAD', 'src/a.ts', '-p', '--'), { maxLength: 3 }),
        (sub, option, pick, withValue, before) => {
          const forms = abbreviations(option);
          const form = forms[pick % forms.length] as string;
          const arg = withValue ? `${form}=x` : form;
          const verdict = checkGitArgs([sub, ...before.filter((b) => b !== '--'), arg]);
          expect(verdict).toMatchObject({ code: 'git_option_refused' });
          // An abbreviation two options share names one of them (the first refused one it abbreviates).
          const named = /the option (\S+) is not allowed/.exec(verdict?.message ?? '')?.[1] ?? '';
          expect(REFUSED_LONG_OPTIONS).toContain(named);
          expect(named.startsWith(form)).toBe(true);
        },
      ),
      { numRuns: runs(400) },
    );
  });

  it('refuses the short options alone and with an attached value', () => {
    for (const o of REFUSED_SHORT_OPTIONS)
      for (const arg of [o, `${o}core.pager=sh`, `${o}x`])
        expect(checkGitArgs(['log', arg]), arg).toMatchObject({ code: 'git_option_refused' });
  });

  it('accepts the look-alikes: options that share a prefix but are no abbreviation, short words, paths', () => {
    for (const args of [
      ['log', '--oneline'],
      ['log', '--format=%H', '--stat'],
      ['diff', '--name-only', 'HEAD~1'],
      ['show', '--no-patch', 'HEAD'],
      ['log', '--'],
      ['log', '--c'],
      ['diff', '--outline'],
      ['log', '--o'],
      ['status', '--porcelain'],
      ['log', 'output.txt', '--extended-regexp'],
    ])
      expect(checkGitArgs(args), args.join(' ')).toBeNull();
  });

  it('refuses a subcommand it does not run', () => {
    for (const args of [[], ['push'], ['config', '--list'], ['--no-pager', 'log']])
      expect(checkGitArgs(args), args.join(' ')).toMatchObject({ code: 'git_subcommand_refused' });
  });
});
