/** Public surface of shell analysis (DESIGN.md §4): the analyzer factory and the rule ids. */
export { createShellAnalyzer, MAX_COMMAND_LENGTH } from './analyzer.ts';
export type { ShellAnalyzerOptions } from './analyzer.ts';
export { HARDLINE_RULES, UNANALYZABLE_RULES } from './ids.ts';
export type { HardlineRuleId, UnanalyzableRuleId } from './ids.ts';
export { MAX_DEPTH } from './walk.ts';
