/**
 * Public surface of the path guard: canonical paths, workspace roots, sensitive and
 * never-writable host paths, the Windows flavor, and the execution-time re-check.
 */
export { createPathGuard } from './guard.ts';
export type { PathCheck, PathDenial, PathGuardOptions, SnotraPathGuard } from './guard.ts';

export { openAtExecution, recheckAtExecution, writeFileAtExecution } from './execution.ts';
export type {
  ExecutionRefusal,
  OpenAtExecutionResult,
  OpenOptions,
  RecheckResult,
  WriteAtExecutionResult,
} from './execution.ts';

export {
  absolutePath,
  canonicalize,
  checkCharacters,
  DEFAULT_MAX_SYMLINKS,
  lexicalNormalize,
  parseAbsolute,
} from './canonicalize.ts';
export type { AbsolutePath, Canonicalization, CanonicalizeContext } from './canonicalize.ts';

export { PathFlavorName, posixFlavor } from './flavor.ts';
export type { ParsedPath, ParseOptions, PathFlavor, PathProblem } from './flavor.ts';
export { windowsFlavor } from './windows-flavor.ts';

export { EntryKind } from './fs.ts';
export type { ExecFs, FileIdentity, OpenResult, PathFs } from './fs.ts';
export { nodeFs } from './node-fs.ts';
export { createMemoryFs } from './memory-fs.ts';
export type { MemoryEntry, MemoryFs } from './memory-fs.ts';

export {
  NEVER_WRITABLE_PATHS,
  PathRuleInput,
  RUNTIME_RULE_IDS,
  SENSITIVE_PATHS,
} from './sensitive-defaults.ts';
export type { PathRule } from './sensitive-defaults.ts';
export { compileRules, escapeGlob } from './sensitive.ts';
export type { RuleAnchors, RuleMatcher } from './sensitive.ts';

export { containingRoots, deniedBy, isInside } from './root-match.ts';
export type { CanonicalRoot } from './root-match.ts';

export { PathRuleId } from './rules.ts';
