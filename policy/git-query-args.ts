/**
 * What `git_query` may be given (issue 35): log, status, diff and show of the repository, nothing
 * that writes a file (`--output=FILE`), reads one outside the repository (`--no-index A B`,
 * `-O FILE`), moves git elsewhere (`--git-dir`, `--exec-path`) or runs a program (`--ext-diff`,
 * `--textconv`, `-c core.pager=...`). Long options are matched with git's unique-prefix
 * abbreviations (`--outp=FILE`, `--ext`).
 */

/** The subcommands git_query runs. */
export const GIT_QUERY_SUBCOMMANDS = ['log', 'status', 'diff', 'show'] as const;

/** Long options git_query refuses, and why. */
const REFUSED_LONG: Readonly<Record<string, string>> = {
  output: 'writes a file',
  'output-directory': 'writes files',
  'no-index': 'reads files outside the repository',
  'ext-diff': 'runs an external diff program',
  textconv: 'runs a text conversion program',
  'exec-path': 'runs git programs from another folder',
  'git-dir': 'reads another repository',
  'work-tree': 'reads another work tree',
  'config-env': 'sets git configuration',
  'open-files-in-pager': 'runs a pager',
  'ignore-revs-file': 'reads a file',
  contents: 'reads a file',
  'upload-pack': 'runs a program',
  exec: 'runs a program',
};

/**
 * The first problem with `args` of a `git_query` call, naming the argument, or null when every
 * argument is allowed. Options end at `--`; after it only pathspecs follow (git keeps them in the
 * repository).
 */
export function gitQueryProblem(args: readonly string[]): string | null {
  const sub = args[0] ?? '';
  if (!(GIT_QUERY_SUBCOMMANDS as readonly string[]).includes(sub))
    return `the first argument must be one of ${GIT_QUERY_SUBCOMMANDS.join(', ')}`;
  for (let i = 1; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--') return null;
    if (a.startsWith('--')) {
      const name = a.slice(2).split('=')[0] ?? '';
      if (name.length < 3) continue;
      for (const [refused, why] of Object.entries(REFUSED_LONG)) {
        if (refused.startsWith(name)) return `argument ${i} (${JSON.stringify(a.slice(0, 40))}) ${why}`;
      }
      continue;
    }
    // `-O FILE` / `-OFILE` reads an order file; `-c name=value` sets configuration (a pager).
    if (/^-O/.test(a)) return `argument ${i} (-O) reads an order file`;
    if (a === '-c' && /=/.test(args[i + 1] ?? '')) return `argument ${i} (-c) sets git configuration`;
  }
  return null;
}
