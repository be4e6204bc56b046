/**
 * Which `git_query` arguments are accepted: read-only subcommands only, and no option that runs
 * a program, writes a file (`--output=FILE`), reads configuration or files from elsewhere
 * (`-c k=v`, `--no-index A B`, `-O FILE`) or leaves the repository. One owner: the policy
 * refuses such a call at decision time (`invalid_arguments`, issue 35) and the executor
 * (actors/tools/git/) checks the same list again before it runs git.
 */

/** The subcommands `git_query` runs. */
export const GIT_QUERY_SUBCOMMANDS: readonly string[] = ['log', 'status', 'diff', 'show'];

/**
 * Long options refused anywhere in the arguments, also abbreviated (git accepts unique
 * prefixes of long options, so `--ext-d` would mean `--ext-diff`).
 */
export const REFUSED_LONG_OPTIONS: readonly string[] = [
  '--output',
  '--ext-diff',
  '--textconv',
  '--exec-path',
  '--git-dir',
  '--work-tree',
  '--upload-pack',
  '--receive-pack',
  '--open-files-in-pager',
  '--config-env',
  '--config',
  '--no-index',
  '--namespace',
  '--super-prefix',
  '--paginate',
  '--exec',
];

/** Short options refused, alone or with an attached value (`-cname=value`, `-Ofile`). */
export const REFUSED_SHORT_OPTIONS: readonly string[] = ['-c', '-O'];

/** Why an argument list is refused, or null when it is accepted. */
export type GitArgsVerdict = null | {
  readonly code: 'git_subcommand_refused' | 'git_option_refused';
  readonly message: string;
};

const MIN_ABBREVIATION = 4;

/** The key of an option's first two letters after `--` (char codes, no string made per call). */
const prefixKey = (arg: string): number => arg.charCodeAt(2) * 65536 + arg.charCodeAt(3);

/** The refused long options by their first two letters (the shortest abbreviation git takes here). */
const REFUSED_BY_PREFIX: ReadonlyMap<number, readonly string[]> = (() => {
  const m = new Map<number, string[]>();
  for (const o of REFUSED_LONG_OPTIONS) m.set(prefixKey(o), [...(m.get(prefixKey(o)) ?? []), o]);
  return m;
})();

function refusedLong(arg: string): string | null {
  // An option shorter than `--xy` has NaN for a key, which no refused option has.
  const candidates = REFUSED_BY_PREFIX.get(prefixKey(arg));
  if (candidates === undefined) return null;
  const eq = arg.indexOf('=');
  const name = eq < 0 ? arg : arg.slice(0, eq);
  for (const refused of candidates) {
    if (name === refused) return refused;
    if (name.length >= MIN_ABBREVIATION && refused.startsWith(name)) return refused;
  }
  return null;
}

function refusedShort(arg: string): string | null {
  if (arg.startsWith('--')) return null;
  for (const refused of REFUSED_SHORT_OPTIONS) if (arg.startsWith(refused)) return refused;
  return null;
}

/**
 * Checks `git_query` arguments. Accepted: `args[0]` is one of `log`, `status`, `diff`, `show`,
 * and no argument is a refused option (checked everywhere, including after `--`, and for
 * abbreviations of the long ones). The messages quote option names, never values.
 */
export function checkGitArgs(args: readonly string[]): GitArgsVerdict {
  const sub = args[0];
  if (sub === undefined || !GIT_QUERY_SUBCOMMANDS.includes(sub)) {
    return {
      code: 'git_subcommand_refused',
      message: `only ${GIT_QUERY_SUBCOMMANDS.join(', ')} are allowed`,
    };
  }
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg.charCodeAt(0) !== 45) continue; // not an option
    const hit = arg.startsWith('--') ? refusedLong(arg) : refusedShort(arg);
    if (hit !== null) {
      return { code: 'git_option_refused', message: `the option ${hit} is not allowed in git_query` };
    }
  }
  return null;
}
