/**
 * A command analyzer whose bash parser (web-tree-sitter and the grammar wasm, ~45 modules and
 * tens of milliseconds) is loaded only when a decision first asks for it. Until then every call
 * records that it was asked and throws `ShellNotLoaded`; the checker then loads the parser and
 * evaluates the call again from the start, so a decision is the one the eagerly loaded analyzer
 * gives (evaluation is a pure function of the call and the context).
 */
import type { CommandAnalysis, CommandAnalyzer, CommandList } from '../../policy/seams.ts';

/** Thrown by a `LazyShell` asked before `load()`: the decision must be evaluated again after it. */
export class ShellNotLoaded extends Error {
  constructor() {
    super('the shell parser is not loaded yet (use PolicyChecker.decide, which loads it)');
    this.name = 'ShellNotLoaded';
  }
}

/** The analyzer the runtime uses: the parser's analysis plus the simple-command listing. */
export async function loadShellAnalyzer(): Promise<Required<CommandAnalyzer>> {
  const [{ createShellAnalyzer }, { withSimpleCommands }] = await Promise.all([
    import('../../policy/shell/index.ts'),
    import('../../policy/shell/simple-commands.ts'),
  ]);
  const analyzer = await withSimpleCommands(await createShellAnalyzer());
  const { commands } = analyzer;
  if (commands === undefined) throw new Error('withSimpleCommands returned an analyzer without commands()');
  return { analyze: (c) => analyzer.analyze(c), commands: (c) => commands.call(analyzer, c) };
}

/**
 * A `CommandAnalyzer` that loads the real one on `load()`; asked before, it throws (unlike the
 * analyzers the runtime hands to its actors, which never throw: this one lives only inside a
 * `PolicyChecker`, whose `decide` catches the throw, loads and evaluates again).
 */
export class LazyShell implements Required<CommandAnalyzer> {
  #real: Required<CommandAnalyzer> | null = null;
  #loading: Promise<Required<CommandAnalyzer>> | null = null;
  /** Set when a decision asked before the parser was loaded (also if the throw was caught). */
  asked = false;

  constructor(private readonly loader: () => Promise<Required<CommandAnalyzer>> = loadShellAnalyzer) {}

  get loaded(): boolean {
    return this.#real !== null;
  }

  /** Loads the real analyzer once; a failed load is not kept, so a later call retries. */
  async load(): Promise<void> {
    if (this.#real !== null) return;
    this.#loading ??= this.loader();
    try {
      this.#real = await this.#loading;
    } finally {
      this.#loading = null;
    }
  }

  analyze(command: string): CommandAnalysis {
    if (this.#real === null) {
      this.asked = true;
      throw new ShellNotLoaded();
    }
    return this.#real.analyze(command);
  }

  commands(command: string): CommandList {
    if (this.#real === null) {
      this.asked = true;
      throw new ShellNotLoaded();
    }
    return this.#real.commands(command);
  }
}
