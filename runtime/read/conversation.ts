import { makeChildRunId } from '../../machines/run/run-id.ts';
import type { Observation, RunContext, RunOutcome } from '../../machines/run/types.ts';
import type { AuditEvent, RunStatus, Store } from '../../store/index.ts';
import { storedContext } from '../runs/stored-run.ts';

/** How the policy decided a call, as the audit recorded it. */
export interface CallDecision {
  readonly decision: string;
  readonly reason: string | null;
  readonly ruleId: string | null;
  readonly risk: string | null;
}

/** A call's approval as the audit recorded it: requested, then resolved (approved, denied, expired). */
export interface CallApproval {
  readonly status: 'pending' | 'approved' | 'denied' | 'expired' | string;
  readonly by: string | null;
  readonly expiresAt: number | null;
}

/** One proposed call in place: its decision, approval, result, and a sub-agent's run nested in it. */
export interface ConversationCall {
  readonly id: string;
  readonly tool: string;
  readonly args: unknown;
  readonly decision: CallDecision | null;
  readonly approval: CallApproval | null;
  readonly result: Observation | null;
  /** `spawn_agent`: the sub-agent's run, nested where it was started (null before it started). */
  readonly child: RunConversation | null;
}

/** One turn: the user's message, or the model's text and the calls it proposed. */
export type ConversationItem =
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'assistant'; readonly text: string | null; readonly calls: readonly ConversationCall[] };

/** A run as a conversation (`GET /v1/runs/:id/conversation`). */
export interface RunConversation {
  readonly runId: string;
  readonly agentId: string;
  readonly status: RunStatus | null;
  readonly outcome: RunOutcome | null;
  readonly items: readonly ConversationItem[];
}

/** What the conversation reader needs. */
export interface ConversationDeps {
  readonly store: Store;
  readonly contextOf: (runId: string) => RunContext | null;
}

/** How deep sub-agents are nested in one answer (deeper ones are shown as not loaded). */
const MAX_DEPTH = 6;

/** The facts of each call from the run's audit events, by call id. */
function callFacts(events: readonly AuditEvent[]) {
  const decision = new Map<string, CallDecision>();
  const approval = new Map<string, CallApproval>();
  for (const e of events) {
    if (e.callId === null) continue;
    const detail = (e.detail ?? {}) as Record<string, unknown>;
    if (e.kind === 'policy_decided')
      decision.set(e.callId, {
        decision: e.status ?? 'unknown',
        reason: typeof detail.reason === 'string' ? detail.reason : null,
        ruleId: e.ruleId,
        risk: e.risk,
      });
    else if (e.kind === 'approval_requested')
      approval.set(e.callId, {
        status: 'pending',
        by: null,
        expiresAt: typeof detail.expiresAt === 'number' ? detail.expiresAt : null,
      });
    else if (e.kind === 'approval_resolved') {
      const by = detail.by ?? detail.decidedBy;
      approval.set(e.callId, {
        status: e.status ?? 'resolved',
        by: typeof by === 'string' ? by : null,
        expiresAt: approval.get(e.callId)?.expiresAt ?? null,
      });
    }
  }
  return { decision, approval };
}

/**
 * A run's transcript as a conversation: each user message, each model turn with its calls in
 * place (decision, approval, result), and each sub-agent's run nested at the `spawn_agent` call
 * that started it. The live context when the run is live, its stored snapshot otherwise; null
 * when there is neither. Not redacted here: the caller redacts what it shows.
 */
export function runConversation(deps: ConversationDeps, runId: string, depth = 0): RunConversation | null {
  const stored = deps.store.snapshots.get(runId);
  const ctx = deps.contextOf(runId) ?? storedContext(stored);
  if (ctx === null) return null;
  const facts = callFacts(deps.store.audit.list({ runId }));
  const results = new Map<string, Observation>();
  for (const e of ctx.transcript)
    if (e.role === 'observation') results.set(e.observation.callId, e.observation);
  const items: ConversationItem[] = [];
  for (const e of ctx.transcript) {
    if (e.role === 'user') items.push({ kind: 'user', text: e.text });
    else if (e.role === 'assistant')
      items.push({
        kind: 'assistant',
        text: e.text ?? null,
        calls: (e.calls ?? []).map((c) => ({
          id: c.id,
          tool: c.tool,
          args: c.args,
          decision: facts.decision.get(c.id) ?? null,
          approval: facts.approval.get(c.id) ?? null,
          result: results.get(c.id) ?? null,
          child:
            c.tool === 'spawn_agent' && depth < MAX_DEPTH
              ? runConversation(deps, makeChildRunId(runId, c.id), depth + 1)
              : null,
        })),
      });
  }
  return {
    runId,
    agentId: ctx.agentId,
    status: stored?.status ?? null,
    outcome: ctx.outcome,
    items,
  };
}
