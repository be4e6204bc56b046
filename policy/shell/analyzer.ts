/**
 * The shell CommandAnalyzer (policy/seams.ts): parse once with tree-sitter-bash, walk every
 * simple command, apply the hardline rules, report reads and writes. `analyze()` is synchronous
 * and never throws: any internal failure is `unanalyzable`. Results are cached per command
 * string (bounded LRU).
 */
import type { CommandAnalysis, CommandAnalyzer } from '../seams.ts';
import { ExpansionLimitError } from './syntax/brace.ts';
import { Findings } from './effects/findings.ts';
import type { UnanalyzableRuleId } from './rules/ids.ts';
import { Lru } from './lru.ts';
import { createBashParser } from './syntax/parser.ts';
import type { BashParser } from './syntax/parser.ts';
import { walkCommand } from './syntax/walk.ts';

/** Longest command string analyzed (UTF-16 code units); longer ones are unanalyzable. */
export const MAX_COMMAND_LENGTH = 256 * 1024;

/** Options of the shell analyzer. */
export interface ShellAnalyzerOptions {
  /** Entries of the per-command-string result cache (default 1024; 0 disables it). */
  readonly cacheSize?: number;
}

function unanalyzable(ruleId: UnanalyzableRuleId, detail: string): CommandAnalysis {
  return Object.freeze({ kind: 'unanalyzable', ruleId, detail });
}

/** Analyzes one command string with `parser`; never throws. */
export function analyzeWith(parser: BashParser, command: string): CommandAnalysis {
  try {
    if (typeof command !== 'string')
      return unanalyzable('unanalyzable.internal-error', 'the command is not a string');
    if (command.length > MAX_COMMAND_LENGTH) {
      return unanalyzable(
        'unanalyzable.input-too-large',
        `the command is longer than ${MAX_COMMAND_LENGTH} characters`,
      );
    }
    if (command.includes('\0'))
      return unanalyzable('unanalyzable.parse-error', 'the command contains a NUL character');
    const findings = new Findings();
    walkCommand(parser, findings, command);
    const effects = {
      reads: Object.freeze([...findings.reads]),
      writes: Object.freeze([...findings.writes]),
      probes: Object.freeze([...findings.probes]),
      trees: Object.freeze([...findings.trees.values()]),
      globs: Object.freeze([...findings.globs.values()]),
    };
    if (findings.hardline === null && findings.unanalyzable !== null) {
      // The parts that were followed still count: a denial in them wins over asking.
      const { ruleId, detail } = findings.unanalyzable;
      return Object.freeze({ kind: 'unanalyzable', ruleId, detail, partial: Object.freeze(effects) });
    }
    return Object.freeze({
      kind: 'analyzed',
      hardline: findings.hardline === null ? null : Object.freeze({ ruleId: findings.hardline.ruleId }),
      ...effects,
      caution: findings.caution === null ? null : Object.freeze({ ...findings.caution }),
    });
  } catch (e) {
    if (e instanceof ExpansionLimitError) return unanalyzable('unanalyzable.limit-exceeded', e.message);
    if (e instanceof RangeError)
      return unanalyzable('unanalyzable.limit-exceeded', 'the command nests too deeply');
    return unanalyzable('unanalyzable.internal-error', 'the analyzer failed; failing closed');
  }
}

/**
 * Creates the shell analyzer. Loads the bash grammar wasm once (from the installed
 * `tree-sitter-bash` package); rejects only when the grammar cannot be loaded. The returned
 * `analyze()` is synchronous, never throws, and returns frozen results: a hardline match wins
 * over an unanalyzable part (deny is stricter than asking); otherwise any unanalyzable part makes
 * the whole command unanalyzable.
 */
export async function createShellAnalyzer(options: ShellAnalyzerOptions = {}): Promise<CommandAnalyzer> {
  const parser = await createBashParser();
  const size = options.cacheSize ?? 1024;
  const cache = size > 0 ? new Lru<string, CommandAnalysis>(size) : null;
  return {
    analyze(command: string): CommandAnalysis {
      const hit = cache?.get(command);
      if (hit !== undefined) return hit;
      const result = analyzeWith(parser, command);
      if (typeof command === 'string' && command.length <= 4096) cache?.set(command, result);
      return result;
    },
  };
}
