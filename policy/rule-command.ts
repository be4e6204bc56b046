/**
 * `command` rules: a program or a command prefix (`git push`) matched on the simple commands a
 * shell command string runs (policy/seams.ts `CommandList`), never on the raw string.
 *
 * The program is matched by name wherever it lives (`/usr/bin/git`, `\git`, `"git"` are `git`),
 * case folded, also in git's dashed form (`git-push` is `git push`). The remaining words must be
 * the command's first operands, in order: options before and between them are skipped, and a
 * word right after an option may be that option's value (`git -C x push`, `npm --registry r
 * publish`); where the lister knows the program's global options (git), the subcommand is the
 * word right after them, so `git --bare commit -m push` is not `git push`. Words compare exactly (`git pushx` is not `git push`). A word only known at run
 * time where a word of the rule is compared makes the match possible but not certain.
 */
import type { CommandList, SimpleCommand } from './seams.ts';

/** Whether a rule matches: certainly, possibly (run-time words or an incomplete list), or not. */
export type Match = 'yes' | 'maybe' | 'no';

const RANK: Readonly<Record<Match, number>> = { no: 0, maybe: 1, yes: 2 };

/** The stronger of two matches (`yes` over `maybe` over `no`). */
export function strongest(a: Match, b: Match): Match {
  return RANK[a] >= RANK[b] ? a : b;
}

/** The weaker of two matches, for matchers that must all hold. */
export function weakest(a: Match, b: Match): Match {
  return RANK[a] <= RANK[b] ? a : b;
}

/** A program name as the shell analysis names programs: basename, lower-cased, no `.exe`. */
export function programName(word: string): string {
  const base = word.split(/[\\/]/).pop() ?? '';
  return base.toLowerCase().replace(/\.(exe|com|bat|cmd|ps1)$/, '');
}

/** The words of a `command` rule, its program folded like program names. */
export function commandWords(pattern: string): string[] {
  const [program = '', ...rest] = pattern.trim().split(/ +/);
  return [programName(program), ...rest];
}

type Word = string | null;

/** Arguments looked at per command; a longer command whose prefix does not match may still. */
const MAX_ARGS = 256;

/** The operands of `args` may start with `words` (a prefix, options skipped). */
function operandsStartWith(all: readonly Word[], words: readonly string[], from = 0): Match {
  const args = all.slice(0, MAX_ARGS);
  const memo = new Map<string, Match>();
  const go = (i: number, j: number, ended: boolean, certain: boolean): Match => {
    if (j === words.length) return certain ? 'yes' : 'maybe';
    if (i >= args.length) return 'no';
    const key = `${i}:${j}:${ended ? 1 : 0}:${certain ? 1 : 0}`;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    const w = args[i];
    let m: Match = 'no';
    if (w === null || w === undefined) {
      // Any word, several words, none, or an option.
      m = strongest(go(i + 1, j, ended, false), go(i + 1, j + 1, ended, false));
      for (let k = j + 2; k <= words.length && m !== 'maybe'; k++)
        m = strongest(m, go(i + 1, k, ended, false));
    } else if (!ended && w === '--') {
      m = go(i + 1, j, true, certain);
    } else if (!ended && w.startsWith('-') && w !== '-') {
      m = go(i + 1, j, ended, certain);
      if (!w.includes('=')) m = strongest(m, go(i + 2, j, ended, certain));
    } else if (w === words[j]) {
      m = go(i + 1, j + 1, ended, certain);
    }
    memo.set(key, m);
    return m;
  };
  const m = go(from, 0, false, true);
  return m === 'no' && all.length > MAX_ARGS ? 'maybe' : m;
}

/** Whether one simple command runs the rule's command (`words` from `commandWords`). */
export function matchSimpleCommand(words: readonly string[], command: SimpleCommand): Match {
  const [program, ...rest] = words;
  if (program === undefined) return 'no';
  let m: Match = 'no';
  if (command.program.includes(program)) m = operandsStartWith(command.args, rest, command.subcommandAt);
  const [sub, ...more] = rest;
  if (sub !== undefined && command.program.includes(`${program}-${sub}`.toLowerCase())) {
    m = strongest(m, operandsStartWith(command.args, more));
  }
  return m;
}

/**
 * Whether a command string (as `list`) runs the rule's `pattern`. Without a list (an analyzer
 * that cannot list commands) or with an incomplete one, the rule possibly matches.
 */
export function matchCommand(pattern: string, list: CommandList | null): Match {
  if (list === null) return 'maybe';
  const words = commandWords(pattern);
  let m: Match = list.complete ? 'no' : 'maybe';
  for (const c of list.commands) {
    m = strongest(m, matchSimpleCommand(words, c));
    if (m === 'yes') return m;
  }
  return m;
}
