/**
 * Delegation (DESIGN.md §6, invariant 5): authority envelopes, their order and meet, spawn-time
 * narrowing, the Explorer profile, and the step-4 guard that keeps a child inside every
 * ancestor's current authority. Pure: file system access only through an injected `PathSpace`.
 */
export {
  AuthorityEnvelope,
  Narrowing,
  NarrowingKind,
  NarrowingReason,
  RequestedRoot,
  SPAWN_TOOL,
  SpawnRequest,
} from './envelope.ts';
export { intersect } from './intersect.ts';
export type { IntersectOptions, Intersection } from './intersect.ts';
export { leq, meet, normalize } from './lattice.ts';
export { meetRoots, normalizeRoots, rootsLeq } from './root-lattice.ts';
export { normalizeDenyGlob, rebaseGlob } from './globs.ts';
export type { Rebased } from './globs.ts';
export { EXPLORER_RULES, EXPLORER_TOOLS, explorerEnvelope } from './explorer.ts';
export {
  contextFromEnvelope,
  createDelegationGuard,
  DELEGATION_RULE_IDS,
  effectiveEnvelope,
} from './guard.ts';
export type { DelegationGuardOptions, DelegationRuleId, EnvelopeContext } from './guard.ts';
export { guardPathSpace, lexicalPathSpace, pathKey } from './space.ts';
export type { Canonicalizer, PathSpace } from './space.ts';
