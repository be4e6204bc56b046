/**
 * Step 4 of the evaluation pipeline: a delegated call must stay inside the authority of every
 * ancestor, as that authority is now (invariant 5: if an ancestor's roots, mode or rules shrink,
 * its live descendants shrink at once).
 */
import type { PolicyContext } from '../context.ts';
import type { RuleRef, Target } from '../decision.ts';
import type { ToolRegistry } from '../registry.ts';
import { containingRoots, deniedBy, parseAbsolute } from '../paths/index.ts';
import type { ToolRisk } from '../risk.ts';
import { strictestRule } from '../rules.ts';
import type { DelegationGuard, Denial } from '../seams.ts';
import type { AuthorityEnvelope } from './envelope.ts';
import { SPAWN_TOOL } from './envelope.ts';
import { meet, onePrimary } from './lattice.ts';
import { placeRoots } from './root-lattice.ts';
import { lexicalPathSpace, pathKey, type PathSpace } from './space.ts';

/** The stable ids of the delegation rules; every denial's reason is `exceeds_parent_authority`. */
export const DELEGATION_RULE_IDS = {
  toolNotDelegated: 'delegation.tool-not-delegated',
  delegationNotGranted: 'delegation.delegation-not-granted',
  modeDeny: 'delegation.mode-deny',
  ruleDeny: 'delegation.rule-deny',
  unresolvableTarget: 'delegation.unresolvable-target',
  outsideRoots: 'delegation.outside-delegated-roots',
  pathDenied: 'delegation.path-denied',
  readOnlyRoot: 'delegation.read-only-delegated-root',
} as const;
/** One of the stable delegation rule ids. */
export type DelegationRuleId = (typeof DELEGATION_RULE_IDS)[keyof typeof DELEGATION_RULE_IDS];

/** Options of `createDelegationGuard`. */
export interface DelegationGuardOptions {
  /** How ancestors' root paths are read; defaults to the host flavor, lexically. */
  readonly space?: PathSpace;
  /** With a registry, ancestors' `deny` rules are applied too (they need the tool's metadata). */
  readonly registry?: ToolRegistry;
}

function exceeded(id: DelegationRuleId): Denial {
  const rule: RuleRef = { id, source: 'delegation' };
  return { reason: 'exceeds_parent_authority', rule };
}

/**
 * Whether a target needs write access: every path of a `write-local` tool, and the paths an
 * `exec` tool's command writes (the pipeline reports them under the argument `command`; the
 * shell's `cwd` is only read).
 */
function needsWrite(risk: ToolRisk, target: Target): boolean {
  return risk === 'write-local' || (risk === 'exec' && target.argument === 'command');
}

function checkTools(
  chain: readonly AuthorityEnvelope[],
  tool: string,
  opts: DelegationGuardOptions,
): Denial | null {
  for (const e of chain) if (!e.tools.includes(tool)) return exceeded(DELEGATION_RULE_IDS.toolNotDelegated);
  if (tool === SPAWN_TOOL && chain.some((e) => !e.mayDelegate))
    return exceeded(DELEGATION_RULE_IDS.delegationNotGranted);
  if (chain.some((e) => e.mode === 'deny')) return exceeded(DELEGATION_RULE_IDS.modeDeny);
  const resolved = opts.registry?.get(tool);
  if (resolved?.status === 'ok') {
    for (const e of chain) {
      if (strictestRule(e.rules, tool, resolved.metadata)?.effect === 'deny')
        return exceeded(DELEGATION_RULE_IDS.ruleDeny);
    }
  }
  return null;
}

function checkTargets(
  chain: readonly AuthorityEnvelope[],
  risk: ToolRisk,
  targets: readonly Target[],
  space: PathSpace,
): Denial | null {
  const { flavor } = space;
  const placed = chain.map((e) => placeRoots(space, e.roots));
  for (const target of targets) {
    if (target.resolved === null) continue;
    const path = parseAbsolute(flavor, target.resolved);
    if (path === null) return exceeded(DELEGATION_RULE_IDS.unresolvableTarget);
    for (const roots of placed) {
      const containing = containingRoots(flavor, roots, path);
      const deepest = containing[0];
      if (deepest === undefined) return exceeded(DELEGATION_RULE_IDS.outsideRoots);
      if (deniedBy(flavor, containing, path) !== null) return exceeded(DELEGATION_RULE_IDS.pathDenied);
      if (needsWrite(risk, target) && deepest.root.access !== 'read-write')
        return exceeded(DELEGATION_RULE_IDS.readOnlyRoot);
    }
  }
  return null;
}

/**
 * The delegation guard of a child run. `getChain` returns every ancestor's envelope as it is
 * now (derived live, never a copy taken at spawn); it is called on every check. A call is
 * denied with `exceeds_parent_authority` (rule source `delegation`) when, for some ancestor:
 * the tool is not in its tool set; the tool is `spawn_agent` and it may not delegate; its mode
 * is `deny`; one of its `deny` rules matches (with `registry`); a resolved path target lies
 * outside its roots, is denied by one of its deny globs, or is written under a root it only
 * reads. Targets without a resolved path (external targets, sensitive-only paths) are not
 * roots' business. The child's own envelope is enforced by the other steps, through the
 * child's context (build it with `effectiveEnvelope`).
 */
export function createDelegationGuard(
  getChain: () => readonly AuthorityEnvelope[],
  options: DelegationGuardOptions = {},
): DelegationGuard {
  const space = options.space ?? lexicalPathSpace();
  return {
    check(tool, risk, targets) {
      const chain = getChain();
      return checkTools(chain, tool, options) ?? checkTargets(chain, risk, targets, space);
    },
  };
}

/**
 * A child's live authority: the meet of every ancestor's current envelope and its own, with the
 * child's own root ids, sources and primary root where its roots survive. Build the child's
 * `PolicyContext` from it on every call, so an ancestor switching to `ask` makes the child ask.
 * Guarantees `effectiveEnvelope(chain, own) ⊑ own` and `⊑` every envelope of the chain.
 */
export function effectiveEnvelope(
  chain: readonly AuthorityEnvelope[],
  own: AuthorityEnvelope,
  space: PathSpace,
): AuthorityEnvelope {
  const met = chain.reduce((acc, e) => meet(acc, e, space), own);
  const labels = new Map<string, AuthorityEnvelope['roots'][number]>();
  for (const r of own.roots) {
    const p = space.canonical(r.path, []);
    if (p !== null) labels.set(pathKey(space.flavor, p), r);
  }
  const relabeled = met.roots.map((r) => {
    const p = space.canonical(r.path, []);
    const label = p === null ? undefined : labels.get(pathKey(space.flavor, p));
    return label === undefined
      ? { root: r, own: false }
      : { root: { ...r, id: label.id, source: label.source, primary: label.primary }, own: true };
  });
  const ownPrimary = relabeled.findIndex((x) => x.own && x.root.primary);
  const roots =
    ownPrimary >= 0
      ? relabeled.map((x, i) => ({ ...x.root, primary: i === ownPrimary }))
      : onePrimary(relabeled.map((x) => x.root));
  return { ...met, roots };
}

/** The parts of a `PolicyContext` an envelope decides. */
export type EnvelopeContext = Pick<
  PolicyContext,
  'mode' | 'interaction' | 'tools' | 'rules' | 'roots' | 'standingApprovals'
>;

/** The envelope as `PolicyContext` fields: its mode, interaction, tool set, rules, roots and standing approvals. */
export function contextFromEnvelope(e: AuthorityEnvelope): EnvelopeContext {
  return {
    mode: e.mode,
    interaction: e.interaction,
    tools: new Set(e.tools),
    rules: e.rules,
    roots: e.roots,
    standingApprovals: e.standingApprovals,
  };
}
