/** What a completion needs of a command spec (`commands.ts`'s `CommandSpec` fits). */
export interface SpecWords {
  readonly path: readonly string[];
  readonly summary: string;
  readonly options: readonly (readonly [string, string])[];
}

/** One word a shell completes, with what it is for. */
export interface Word {
  readonly name: string;
  readonly summary: string;
}

/** What completes after `snotra`: its commands and groups, each group's subcommands, each leaf's flags. */
export interface CompletionTree {
  readonly top: readonly Word[];
  /** Group name → its subcommands. */
  readonly groups: ReadonlyMap<string, readonly Word[]>;
  /** `start`, `inbox list` → that command's long flags. */
  readonly flags: ReadonlyMap<string, readonly Word[]>;
}

/** The long flags of a spec's option rows (`--config F` → `--config`), with `--help`. */
function flagsOf(spec: SpecWords): Word[] {
  const words = spec.options.flatMap(([flags, summary]) =>
    flags
      .split(/[ ,|]+/)
      .filter((f) => /^--[a-z][a-z0-9-]*$/.test(f))
      .map((name) => ({ name, summary })),
  );
  return [...words, { name: '--help', summary: 'show this help' }];
}

/**
 * The completion tree of the command specs and groups the commander program is built from
 * (`COMMAND_SPECS`, `GROUPS`), so every completion script stays true to `snotra --help`.
 */
export function completionTree(
  specs: readonly SpecWords[],
  groupSummaries: Readonly<Record<string, string>>,
): CompletionTree {
  const top: Word[] = [];
  const groups = new Map<string, Word[]>();
  const flags = new Map<string, Word[]>();
  for (const spec of specs) {
    const [first, second] = spec.path as [string, string | undefined];
    if (second === undefined) top.push({ name: first, summary: spec.summary });
    else {
      if (!groups.has(first)) {
        groups.set(first, []);
        top.push({ name: first, summary: groupSummaries[first] ?? '' });
      }
      groups.get(first)?.push({ name: second, summary: spec.summary });
    }
    flags.set(spec.path.join(' '), flagsOf(spec));
  }
  top.push({ name: 'help', summary: 'show the help of a command' });
  return { top, groups, flags };
}
