/**
 * The order and meet of authority envelopes. `leq(a, b)` ("a ⊑ b") holds when `a` grants no
 * more than `b`; `meet(a, b)` is the most authority both grant. Laws (tested with fast-check, on
 * `normalize`d forms): meet is idempotent, commutative and associative; `meet(a, b) ⊑ a`.
 */
import type { StandingApproval } from '../approvals.ts';
import { MODE_STRICTNESS, stricterMode, type Interaction } from '../risk.ts';
import type { WorkspaceRoot } from '../roots.ts';
import type { ToolRule } from '../rules.ts';
import type { AuthorityEnvelope } from './envelope.ts';
import { SPAWN_TOOL } from './envelope.ts';
import { compareText } from './globs.ts';
import { meetRoots, normalizeRoots, rootsLeq } from './root-lattice.ts';
import type { PathSpace } from './space.ts';

/** An identity for a tool rule: equal for rules that match and act the same. */
export function ruleKey(rule: ToolRule): string {
  const base = [rule.id, rule.tool ?? null, rule.risk ?? null, rule.source ?? null, rule.effect];
  if (rule.command === undefined && rule.path === undefined && rule.target === undefined)
    return JSON.stringify(base);
  // Argument matchers are part of what a rule matches: two rules differing only there are two rules.
  const args = [rule.command ?? null, rule.path ?? null, rule.access ?? null, rule.target ?? null];
  return JSON.stringify([...base, ...args]);
}

/** An identity for a standing approval: all of its fields. */
export function standingKey(a: StandingApproval): string {
  return JSON.stringify([a.id, a.ownerTaskId, a.tool, a.target]);
}

/** Sorted, de-duplicated strings. */
export function sortedUnique(items: Iterable<string>): string[] {
  return [...new Set(items)].sort(compareText);
}

/** Sorted, de-duplicated values by key. */
export function uniqueBy<T>(items: Iterable<T>, key: (t: T) => string): T[] {
  const map = new Map<string, T>();
  for (const item of items) if (!map.has(key(item))) map.set(key(item), item);
  return [...map.entries()].sort(([a], [b]) => compareText(a, b)).map(([, v]) => v);
}

/** `unattended` wins: a run with any unattended side parks approvals in the Inbox. */
export function meetInteraction(a: Interaction, b: Interaction): Interaction {
  return a === 'unattended' || b === 'unattended' ? 'unattended' : 'attended';
}

/** The tool set of an envelope: sorted, unique, without `spawn_agent` unless it may delegate. */
export function envelopeTools(tools: Iterable<string>, mayDelegate: boolean): string[] {
  return sortedUnique(tools).filter((t) => mayDelegate || t !== SPAWN_TOOL);
}

/** Exactly one primary root when any is flagged: the first flagged, in the given order. */
export function onePrimary(roots: readonly WorkspaceRoot[]): WorkspaceRoot[] {
  const first = roots.findIndex((r) => r.primary);
  return roots.map((r, i) => (r.primary === (i === first) ? r : { ...r, primary: i === first }));
}

/**
 * The normal form: the same authority, spelled one way. Tools, secrets, rules and standing
 * approvals sorted and unique (no `spawn_agent` without `mayDelegate`); roots in the normal form
 * of `normalizeRoots`, whose one primary root is the input's when it had exactly one, and which
 * has none otherwise (neither resolves a relative path). Idempotent.
 */
export function normalize(e: AuthorityEnvelope, space: PathSpace): AuthorityEnvelope {
  return {
    mode: e.mode,
    tools: envelopeTools(e.tools, e.mayDelegate),
    rules: uniqueBy(e.rules, ruleKey),
    roots: normalizeRoots(space, e.roots),
    secrets: sortedUnique(e.secrets),
    standingApprovals: uniqueBy(e.standingApprovals, standingKey),
    interaction: e.interaction,
    mayDelegate: e.mayDelegate,
  };
}

/**
 * The meet of two envelopes: the stricter mode, the common tools, every rule of either, the
 * roots' meet (`meetRoots`: inner paths, lesser access, all globs), the common secrets and
 * standing approvals, `unattended` if either is, and delegation only if both may. Symmetric
 * (labels included); a root is primary only where both sides have their one primary root.
 */
export function meet(a: AuthorityEnvelope, b: AuthorityEnvelope, space: PathSpace): AuthorityEnvelope {
  const mayDelegate = a.mayDelegate && b.mayDelegate;
  const bTools = new Set(b.tools);
  const bSecrets = new Set(b.secrets);
  const bStanding = new Set(b.standingApprovals.map(standingKey));
  return {
    mode: stricterMode(a.mode, b.mode),
    tools: envelopeTools(
      a.tools.filter((t) => bTools.has(t)),
      mayDelegate,
    ),
    rules: uniqueBy([...a.rules, ...b.rules], ruleKey),
    roots: meetRoots(space, a.roots, b.roots),
    secrets: sortedUnique(a.secrets.filter((s) => bSecrets.has(s))),
    standingApprovals: uniqueBy(
      a.standingApprovals.filter((s) => bStanding.has(standingKey(s))),
      standingKey,
    ),
    interaction: meetInteraction(a.interaction, b.interaction),
    mayDelegate,
  };
}

/**
 * "a ⊑ b": `a` grants no more than `b`. Mode at least as strict; tools, secrets and standing
 * approvals a subset; every rule of `b` also in `a` (rules only reduce); roots no larger at any
 * path (`rootsLeq`, semantic: a root is covered by the roots of `b` containing it, with nested
 * roots of `b` and their globs taken into account); delegation only if `b` may; `a` unattended
 * whenever `b` is. Sound: when true, every call `a`'s envelope allows, `b`'s allows.
 */
export function leq(a: AuthorityEnvelope, b: AuthorityEnvelope, space: PathSpace): boolean {
  if (MODE_STRICTNESS[a.mode] < MODE_STRICTNESS[b.mode]) return false;
  const bTools = new Set(envelopeTools(b.tools, b.mayDelegate));
  if (envelopeTools(a.tools, a.mayDelegate).some((t) => !bTools.has(t))) return false;
  const aRules = new Set(a.rules.map(ruleKey));
  if (b.rules.some((r) => !aRules.has(ruleKey(r)))) return false;
  const bSecrets = new Set(b.secrets);
  if (a.secrets.some((s) => !bSecrets.has(s))) return false;
  const bStanding = new Set(b.standingApprovals.map(standingKey));
  if (a.standingApprovals.some((s) => !bStanding.has(standingKey(s)))) return false;
  if (a.mayDelegate && !b.mayDelegate) return false;
  if (b.interaction === 'unattended' && a.interaction !== 'unattended') return false;
  return rootsLeq(space, a.roots, b.roots);
}
