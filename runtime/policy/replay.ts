import type { Decision, DecisionKind } from '../../policy/decision.ts';
import type { ToolCall } from '../../policy/context.ts';
import type { AuditEvent } from '../../store/index.ts';
import type { Config } from '../config/schema.ts';

/** One call recorded in the audit: its proposed (redacted) arguments and the decision it got. */
export interface RecordedCall {
  readonly seq: number;
  readonly at: number;
  readonly runId: string;
  readonly callId: string;
  readonly agentId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly recorded: DecisionKind;
}

/** A recorded call whose decision the proposed config changes. */
export interface ReplayChange {
  readonly seq: number;
  readonly runId: string;
  readonly callId: string;
  readonly agentId: string;
  readonly tool: string;
  readonly from: DecisionKind;
  readonly to: DecisionKind;
  /** The rule of the proposed config that decided it. */
  readonly rule: string;
  readonly looser: boolean;
}

/** What `snotra policy replay` reports. */
export interface ReplayReport {
  readonly replayed: number;
  /** Recorded calls of agents the proposed config does not have (not evaluated). */
  readonly skipped: number;
  /** The changes grouped by `from→to`, each group in audit order. */
  readonly groups: Readonly<Record<string, readonly ReplayChange[]>>;
  /** How many calls the proposed config would decide more loosely (exit 3 when any). */
  readonly looser: number;
  /** The proposed config's rules that decided none of the recorded calls, by agent. */
  readonly unusedRules: readonly { readonly agent: string; readonly rule: string }[];
}

const RANK: Readonly<Record<DecisionKind, number>> = { deny: 0, 'approval-required': 1, allow: 2 };
const KINDS = new Set<string>(['allow', 'deny', 'approval-required']);

/**
 * The tool calls recorded in `events` (their `proposed` and `policy_decided` events paired by run
 * and call), from `since` (ms) on, of `agent` when given, in audit order.
 */
export function recordedCalls(
  events: Iterable<AuditEvent>,
  filter: { readonly since?: number; readonly agent?: string } = {},
): RecordedCall[] {
  const proposed = new Map<string, AuditEvent>();
  const out: RecordedCall[] = [];
  for (const e of events) {
    if (e.runId === null || e.callId === null || e.tool === null) continue;
    const key = `${e.runId}\u0000${e.callId}`;
    if (e.kind === 'proposed') proposed.set(key, e);
    else if (e.kind === 'policy_decided' && e.status !== null && KINDS.has(e.status)) {
      const p = proposed.get(key);
      proposed.delete(key);
      if (p === undefined || e.agentId === null) continue;
      if (filter.since !== undefined && p.at < filter.since) continue;
      if (filter.agent !== undefined && e.agentId !== filter.agent) continue;
      const detail = p.detail as { args?: unknown } | null;
      out.push({
        seq: p.seq,
        at: p.at,
        runId: e.runId,
        callId: e.callId,
        agentId: e.agentId,
        tool: e.tool,
        args: detail?.args ?? {},
        recorded: e.status as DecisionKind,
      });
    }
  }
  return out;
}

/**
 * Evaluates every recorded call again with `decide` (the proposed config's policy) and reports
 * the decisions that change, grouped by change, and the proposed rules no call was decided by.
 * Arguments are evaluated as the audit keeps them (redacted).
 */
export function replayCalls(
  calls: readonly RecordedCall[],
  proposed: Config,
  decide: (agent: string, call: ToolCall) => Decision,
): ReplayReport {
  const groups: Record<string, ReplayChange[]> = {};
  const used = new Set<string>();
  let looser = 0;
  let skipped = 0;
  let replayed = 0;
  for (const c of calls) {
    if (!Object.hasOwn(proposed.agents, c.agentId)) {
      skipped++;
      continue;
    }
    replayed++;
    const d = decide(c.agentId, { tool: c.tool, args: c.args });
    if (d.rule.source === 'tool-rule') used.add(`${c.agentId}\u0000${d.rule.id}`);
    if (d.decision === c.recorded) continue;
    const isLooser = RANK[d.decision] > RANK[c.recorded];
    if (isLooser) looser++;
    const change: ReplayChange = {
      seq: c.seq,
      runId: c.runId,
      callId: c.callId,
      agentId: c.agentId,
      tool: c.tool,
      from: c.recorded,
      to: d.decision,
      rule: d.rule.id,
      looser: isLooser,
    };
    (groups[`${c.recorded}→${d.decision}`] ??= []).push(change);
  }
  const unusedRules: { agent: string; rule: string }[] = [];
  for (const [agent, a] of Object.entries(proposed.agents))
    for (const r of a.rules) if (!used.has(`${agent}\u0000${r.id}`)) unusedRules.push({ agent, rule: r.id });
  return { replayed, skipped, groups, looser, unusedRules };
}
