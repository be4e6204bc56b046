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

/** The refused names by their first three letters (an abbreviation has at least three). */
const REFUSED_BY_PREFIX: ReadonlyMap<string, readonly (readonly [string, string])[]> = (() => {
  const m = new Map<string, [string, string][]>();
  for (const [name, why] of Object.entries(REFUSED_LONG)) {
    const key = name.slice(0, 3);
    m.set(key, [...(m.get(key) ?? []), [name, why]]);
  }
  return m;
})();
const SUBCOMMANDS: ReadonlySet<string> = new Set(GIT_QUERY_SUBCOMMANDS);

/**
 * The first problem with `args` of a `git_query` call, naming the argument, or null when every
 * argument is allowed. Options end at `--`; after it only pathspecs follow (git keeps them in the
 * repository).
 */
export function gitQueryProblem(args: readonly string[]): string | null {
  const sub = args[0] ?? '';
  if (!SUBCOMMANDS.has(sub)) return `the first argument must be one of ${GIT_QUERY_SUBCOMMANDS.join(', ')}`;
  for (let i = 1; i < args.length; i++) {
    const a = args[i] as string;
    if (a.charCodeAt(0) !== 45) continue; // not an option
    if (a === '--') return null;
    if (a.charCodeAt(1) === 45) {
      const candidates = REFUSED_BY_PREFIX.get(a.slice(2, 5));
      if (candidates === undefined) continue;
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      for (const [refused, why] of candidates) {
        if (name.length >= 3 && refused.startsWith(name))
          return `argument ${i} (${JSON.stringify(a.slice(0, 40))}) ${why}`;
      }
      continue;
    }
    // `-O FILE` / `-OFILE` reads an order file; `-c name=value` sets configuration (a pager).
    if (a.charCodeAt(1) === 79) return `argument ${i} (-O) reads an order file`;
    if (a === '-c' && (args[i + 1] ?? '').includes('=')) return `argument ${i} (-c) sets git configuration`;
  }
  return null;
}
