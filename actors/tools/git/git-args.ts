/**
 * Which `git_query` arguments are accepted: read-only subcommands only, and no option that runs
 * a program, writes a file, reads configuration from elsewhere or leaves the repository.
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

function refusedLong(arg: string): string | null {
  const name = arg.split('=', 1)[0] ?? arg;
  for (const refused of REFUSED_LONG_OPTIONS) {
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
  for (const arg of args.slice(1)) {
    const hit = arg.startsWith('--') ? refusedLong(arg) : refusedShort(arg);
    if (hit !== null) {
      return { code: 'git_option_refused', message: `the option ${hit} is not allowed in git_query` };
    }
  }
  return null;
}

/**
 * Options placed before the subcommand: no pager, no filesystem monitor or hooks, no network
 * (a partial clone would otherwise fetch and could start ssh).
 */
export const GIT_GLOBAL_OPTIONS: readonly string[] = [
  '--no-pager',
  '-c',
  'core.pager=cat',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'protocol.allow=never',
];

/** Options placed right after a diff-producing subcommand: no external diff, no textconv. */
export function subcommandSafetyOptions(sub: string): readonly string[] {
  return sub === 'status' ? [] : ['--no-ext-diff', '--no-textconv'];
}
