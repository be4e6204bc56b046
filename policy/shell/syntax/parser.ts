/**
 * Loading the bash grammar (web-tree-sitter + the wasm shipped inside `tree-sitter-bash`) once
 * per process, and a parser handle that always frees its trees.
 */
import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';
import type { Node } from 'web-tree-sitter';

/** A bash parser bound to the loaded grammar. */
export interface BashParser {
  /**
   * Parse `source`, hand the root node to `use`, free the tree afterwards (also when `use`
   * throws). Returns null when the parser produced no tree.
   */
  withTree<T>(source: string, use: (root: Node) => T): T | null;
}

let languagePromise: Promise<Language> | null = null;

/**
 * The bash Language, loaded once. The wasm file is resolved from the installed
 * `tree-sitter-bash` package (never a path relative to the working directory). A failed load
 * is not cached, so a later call retries.
 */
export function loadBashLanguage(): Promise<Language> {
  if (languagePromise === null) {
    languagePromise = (async () => {
      const require = createRequire(import.meta.url);
      await Parser.init();
      return Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    })();
    languagePromise.catch(() => {
      languagePromise = null;
    });
  }
  return languagePromise;
}

/** A parser for the bash grammar; the grammar wasm is loaded at most once per process. */
export async function createBashParser(): Promise<BashParser> {
  const language = await loadBashLanguage();
  const parser = new Parser();
  parser.setLanguage(language);
  return {
    withTree<T>(source: string, use: (root: Node) => T): T | null {
      const tree = parser.parse(source);
      if (tree === null) return null;
      try {
        return use(tree.rootNode);
      } finally {
        tree.delete();
      }
    },
  };
}
