import { sessionApprovalCovers, standingApprovalEligible } from './approvals.ts';
import type { Decision, ReasonCode, RuleRef, Target } from './decision.ts';
import type { ToolSecurityMetadata } from './metadata.ts';
import type { PolicyContext, ToolCall } from './context.ts';
import { describeIssues, jsonType, MAX_DETAIL } from './issues.ts';
import { applyRules, type RuleDeps } from './rule-step.ts';
import { shellPending, shellStep2, shellStep3, type ShellStep2 } from './shell-step.ts';
import type { CommandList, Denial } from './seams.ts';
import type { ToolRisk } from './risk.ts';

type Pending = {
  readonly reason: ReasonCode;
  readonly rule: RuleRef;
  readonly step: number;
  readonly liftable: boolean;
  readonly detail?: string | undefined;
};

const RULE_TOOL_NOT_FOUND: RuleRef = { id: 'metadata.tool-not-found', source: 'metadata' };
const RULE_NOT_GRANTED: RuleRef = { id: 'metadata.tool-not-granted', source: 'metadata' };
const RULE_UNANNOTATED: RuleRef = { id: 'metadata.unannotated', source: 'metadata' };
const RULE_INVALID_METADATA: RuleRef = { id: 'metadata.invalid', source: 'metadata' };
const RULE_INVALID_ARGS: RuleRef = { id: 'metadata.invalid-arguments', source: 'metadata' };
const RULE_DEFAULT_ASK: RuleRef = { id: 'metadata.approval-default.ask', source: 'metadata' };
const RULE_DEFAULT_DENY: RuleRef = { id: 'metadata.approval-default.deny', source: 'metadata' };
const MODE_RULES = {
  allow: { id: 'mode.allow', source: 'mode' },
  askRead: { id: 'mode.ask.read', source: 'mode' },
  ask: { id: 'mode.ask', source: 'mode' },
  deny: { id: 'mode.deny', source: 'mode' },
} as const satisfies Record<string, RuleRef>;
const RULE_NO_SANDBOX: RuleRef = { id: 'mode.allow.no-sandbox', source: 'mode' };
const NO_TARGETS: readonly Target[] = Object.freeze([]);
const NO_NAMES: readonly string[] = Object.freeze([]);

function decide(
  decision: Decision['decision'],
  reason: ReasonCode,
  risk: ToolRisk,
  rule: RuleRef,
  targets: readonly Target[],
  step: number,
  detail?: string,
): Decision {
  const d: Decision = {
    decision,
    reason,
    risk,
    rule,
    targets: targets as Target[],
    humanRequired: decision === 'approval-required',
    step,
  };
  if (detail !== undefined)
    d.detail = detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL - 1)}…` : detail;
  return d;
}

function denyWith(d: Denial, risk: ToolRisk, targets: readonly Target[], step: number): Decision {
  return decide('deny', d.reason, risk, d.rule, d.target ? [...targets, d.target] : targets, step);
}

/**
 * The one policy engine (invariant 1). Evaluates a proposed call in the order of DESIGN.md §4
 * and stops at the first hard denial. Never throws on untrusted input: a malformed call is a
 * `deny` (unknown tool, invalid arguments) or needs a human (missing or invalid metadata).
 * Interaction (attended/unattended) never changes the result (invariant 6).
 */
export function evaluate(call: ToolCall, ctx: PolicyContext): Decision {
  const decision = evaluateCall(call, ctx);
  const tool = typeof call.tool === 'string' ? ctx.registry.get(call.tool) : undefined;
  // The declaration decided on travels with the decision (an MCP tool may change under it).
  if (tool?.status === 'ok' && tool.digest !== undefined) decision.toolDigest = tool.digest;
  return decision;
}

function evaluateCall(call: ToolCall, ctx: PolicyContext): Decision {
  // Step 1: the tool exists, is granted, has valid metadata, and its arguments validate.
  const tool = typeof call.tool === 'string' ? ctx.registry.get(call.tool) : undefined;
  if (tool === undefined)
    return decide('deny', 'tool_not_found', 'external', RULE_TOOL_NOT_FOUND, NO_TARGETS, 1);
  if (ctx.tools !== null && !ctx.tools.has(tool.name)) {
    return decide(
      'deny',
      'tool_not_granted',
      tool.status === 'ok' ? tool.metadata.risk : 'external',
      RULE_NOT_GRANTED,
      NO_TARGETS,
      1,
      `"${tool.name}" is defined but not in this agent's tools`,
    );
  }
  if (tool.status !== 'ok') {
    // Without trusted metadata the risk is unknown: treat it as the widest, and fail closed.
    if (ctx.mode === 'deny') return decide('deny', 'mode_deny', 'external', MODE_RULES.deny, NO_TARGETS, 5);
    const unannotated = tool.status === 'unannotated';
    return decide(
      'approval-required',
      unannotated ? 'unannotated_tool' : 'invalid_metadata',
      'external',
      unannotated ? RULE_UNANNOTATED : RULE_INVALID_METADATA,
      NO_TARGETS,
      1,
    );
  }
  const meta = tool.metadata;
  const risk = meta.risk;
  const parsed = tool.args.safeParse(call.args);
  if (!parsed.success) {
    const detail = describeIssues(parsed.error.issues, call.args);
    return decide('deny', 'invalid_arguments', risk, RULE_INVALID_ARGS, NO_TARGETS, 1, detail);
  }
  const args = parsed.data;

  // Step 2: hardline commands and sensitive host paths, in every mode.
  let pending: Pending | null = null;
  const pathArgs = meta.pathArguments ?? NO_NAMES;
  const access = risk === 'write-local' ? 'write' : 'read';
  for (const argument of pathArgs) {
    const input = args[argument];
    if (input === undefined) continue;
    if (typeof input !== 'string') {
      const detail = `${argument}: expected string, got ${jsonType(input)}`;
      return decide('deny', 'invalid_arguments', risk, RULE_INVALID_ARGS, NO_TARGETS, 1, detail);
    }
    const sensitive = ctx.paths.checkSensitive(input, access, ctx.roots);
    if (sensitive) return denyWith(sensitive, risk, NO_TARGETS, 2);
  }
  const isShell = tool.name === 'shell' && typeof args.command === 'string';
  const cwdInput = isShell && typeof args.cwd === 'string' ? args.cwd : null;
  let shell: ShellStep2 | null = null;
  if (isShell) {
    shell = shellStep2(args.command as string, cwdInput, ctx);
    if (shell.kind === 'deny') return denyWith(shell.denial, risk, NO_TARGETS, 2);
    if (shell.kind === 'unanalyzable')
      pending = { reason: shell.reason, rule: shell.rule, step: 2, liftable: false };
  }

  // Step 3: canonical paths inside the roots that grant the access needed.
  const targets: Target[] = [];
  for (const argument of pathArgs) {
    const input = args[argument];
    if (typeof input !== 'string') continue;
    if (meta.pathScope === 'sensitive-only') {
      targets.push({ argument, input, resolved: null, root: null, access: null });
      continue;
    }
    // The shell's cwd is where it runs, not what it writes: it must be inside a root.
    const resolution = ctx.paths.resolve(argument, input, risk === 'exec' ? 'read' : access, ctx.roots);
    if (!resolution.ok) return denyWith(resolution, risk, targets, 3);
    targets.push(resolution.target);
  }
  if (shell?.kind === 'unanalyzable' && shell.analysis.kind === 'unanalyzable' && shell.analysis.partial) {
    // A literal write outside the writable roots is denied, whatever else the command does.
    const denied = shellStep3(shell.analysis.partial, cwdInput, ctx, []);
    if (denied) return denyWith(denied, risk, targets, 3);
  }
  if (shell?.kind === 'ok') {
    const denied = shellStep3(shell.analysis, cwdInput, ctx, targets, shell.links);
    if (denied) return denyWith(denied, risk, targets, 3);
    // Fail closed: a command with an effect the analysis cannot account for needs a human.
    const unaccounted = shellPending(shell.analysis, cwdInput, ctx, shell.links);
    // A human's session approval of this exact command may lift it, unless a path in it is
    // only known at run time (the next run of the same text may touch something else).
    if (unaccounted !== null) pending = { ...unaccounted, liftable: unaccounted.reason !== 'dynamic_path' };
  }

  let target: string | null = null;
  if (meta.targetArgument !== undefined) {
    const value = args[meta.targetArgument];
    if (typeof value === 'string') {
      target = value;
      targets.push({ argument: meta.targetArgument, input: value, resolved: null, root: null, access: null });
    }
  } else if (tool.name === 'shell') {
    target = args.command as string;
  } else if (targets.length > 0) {
    target = targets[0]?.resolved ?? null;
  }

  // Step 4: a delegated call must stay inside the parent's authority.
  if (ctx.delegation !== null) {
    const exceeded = ctx.delegation.check(tool.name, risk, targets);
    if (exceeded) return denyWith(exceeded, risk, targets, 4);
  }

  // Step 5: the global mode.
  if (ctx.mode === 'deny') return decide('deny', 'mode_deny', risk, MODE_RULES.deny, targets, 5);
  if (ctx.mode === 'ask' && risk !== 'read') {
    pending ??= { reason: 'mode_ask', rule: MODE_RULES.ask, step: 5, liftable: true };
  }
  // `allow` lets a shell command through on the promise that the OS sandbox confines what static
  // analysis cannot see; without a sandbox a human decides (never silently unconfined).
  if (isShell && ctx.mode === 'allow' && !ctx.sandboxed) {
    pending ??= { reason: 'sandbox_unavailable', rule: RULE_NO_SANDBOX, step: 5, liftable: true };
  }

  // Step 6: the tool's own default and the agent's rules may only keep or reduce authority.
  if (meta.approvalDefault === 'deny')
    return decide('deny', 'tool_default_deny', risk, RULE_DEFAULT_DENY, targets, 6);
  const outcome =
    ctx.rules.length > 0
      ? applyRules(
          ctx.rules,
          { tool: tool.name, metadata: meta, command: isShell ? (args.command as string) : null, targets },
          ruleDeps(ctx),
        )
      : null;
  if (outcome?.effect === 'deny') {
    const ref: RuleRef = { id: outcome.rule.id, source: 'tool-rule' };
    return decide('deny', 'tool_rule_deny', risk, ref, targets, 6, outcome.detail);
  }
  if (meta.approvalDefault === 'ask') {
    pending ??= {
      reason: 'tool_default_ask',
      rule: RULE_DEFAULT_ASK,
      step: 6,
      liftable: meta.alwaysAsk !== true,
    };
  }
  if (outcome?.effect === 'ask') {
    pending ??= {
      reason: 'tool_rule_ask',
      rule: { id: outcome.rule.id, source: 'tool-rule' },
      step: 6,
      liftable: true,
      detail: outcome.detail,
    };
  }

  if (pending === null) {
    const modeRule = ctx.mode === 'ask' ? MODE_RULES.askRead : MODE_RULES.allow;
    return decide('allow', 'mode_allow', risk, modeRule, targets, 5);
  }
  if (pending.liftable) {
    // Step 7: a human approved this for the session.
    const session = findSessionApproval(ctx, tool.name, meta, target);
    if (session !== null)
      return decide(
        'allow',
        'session_approval',
        risk,
        { id: session, source: 'session-approval' },
        targets,
        7,
      );
    // Step 8: a standing approval of this task for this exact tool and target.
    const standing = findStandingApproval(ctx, tool.name, meta, target);
    if (standing !== null)
      return decide(
        'allow',
        'standing_approval',
        risk,
        { id: standing, source: 'standing-approval' },
        targets,
        8,
      );
  }
  // Step 9: a human decides.
  return decide(
    'approval-required',
    pending.reason,
    risk,
    pending.rule,
    targets,
    pending.step,
    pending.detail,
  );
}

/** What the rule step needs from the context: the command lister and the roots' spellings. */
function ruleDeps(ctx: PolicyContext): RuleDeps {
  let roots: Map<string, string[]> | null = null;
  const analyzer = ctx.shell;
  return {
    commands: analyzer.commands
      ? (command) => (analyzer.commands as (c: string) => CommandList)(command)
      : null,
    rootPaths() {
      if (roots !== null) return roots;
      roots = new Map();
      for (const root of ctx.roots) {
        const spellings = [root.path];
        // The canonical spelling, as targets are canonical (a root given through a symlink).
        const r = ctx.paths.resolve('root', root.path, 'read', [root]);
        if (r.ok && r.target.resolved !== null && r.target.resolved !== root.path)
          spellings.push(r.target.resolved);
        roots.set(root.id, spellings);
      }
      return roots;
    },
  };
}

function findSessionApproval(
  ctx: PolicyContext,
  tool: string,
  meta: ToolSecurityMetadata,
  target: string | null,
): string | null {
  if (ctx.sessionId === null) return null;
  for (const a of ctx.sessionApprovals) {
    if (a.sessionId === ctx.sessionId && a.tool === tool && sessionApprovalCovers(a, meta, target))
      return a.id;
  }
  return null;
}

function findStandingApproval(
  ctx: PolicyContext,
  tool: string,
  meta: ToolSecurityMetadata,
  target: string | null,
): string | null {
  if (ctx.taskId === null || target === null || !standingApprovalEligible(meta)) return null;
  for (const a of ctx.standingApprovals) {
    if (a.ownerTaskId === ctx.taskId && a.tool === tool && a.target === target) return a.id;
  }
  return null;
}
