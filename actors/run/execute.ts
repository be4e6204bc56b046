import type { Decision } from '../../policy/decision.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { Store } from '../../store/index.ts';
import type { ExecuteInput, ModelUsage, Observation } from '../../machines/run/types.ts';
import type { Observation as ToolObservation, ToolOutcome } from '../tools/observation.ts';
import type { ToolExecutionContext, ToolExecutor } from '../tools/types.ts';
import { ARGS_NOT_KEPT_CAUSE, ARGS_NOT_KEPT_MESSAGE } from './args-at-rest.ts';
import { APPROVAL_ARGS_MISMATCH, APPROVAL_ARGS_MISMATCH_MESSAGE, checkBinding } from './approval-binding.ts';

/** What the ledger-protected execution needs from the runtime. */
export interface ExecuteDeps {
  readonly store: Store;
  readonly registry: ToolRegistry;
  readonly executors: Readonly<Record<string, ToolExecutor>>;
  /** Per-run execution context pieces (roots as they are now, path guard, secrets, cancel signal). */
  readonly contextFor: (
    runId: string,
  ) => Omit<ToolExecutionContext, 'runId' | 'callId' | 'idempotencyKey' | 'decision'>;
  /** Turns a tool result or error into the model-visible observation: size-capped and redacted, in one place. */
  readonly observe: (outcome: ToolOutcome) => ToolObservation;
  /** Run metadata for ledger and audit rows. */
  readonly runMeta: (runId: string) => { sessionId: string; agentId: string; surface: string };
  /**
   * Cluster-wide claims of external or non-idempotent calls (cluster mode, runtime/cluster).
   * Absent on a single node: the local ledger alone decides, as it always has.
   */
  readonly claims?: CallClaims;
  /**
   * Called just before a call's tool runs (its `started` row is written): the runtime checkpoints
   * the read-write roots the call can change. A throw fails the call, which then does not run.
   */
  readonly beforeRun?: (call: BeforeRunCall) => void;
}

/** The call `ExecuteDeps.beforeRun` is told about. */
export interface BeforeRunCall {
  readonly runId: string;
  readonly callId: string;
  readonly sessionId: string;
  readonly tool: string;
  readonly decision: Decision;
}

/** What claiming a call cluster-wide found (see {@link CallClaims}). */
export type ClaimOutcome =
  | { readonly state: 'claimed' }
  | { readonly state: 'completed'; readonly stored: unknown }
  | { readonly state: 'failed'; readonly stored: unknown }
  /** Started by `node` and never finished there (it died mid-call): do not run it again. */
  | { readonly state: 'taken'; readonly node: string; readonly attempt: number }
  /** The claim could not be recorded (no quorum): the call must not run. */
  | { readonly state: 'unavailable'; readonly message: string };

/**
 * The exactly-once claim of a call across nodes: `claim` before the call runs (only a `claimed`
 * outcome may run it), `settle` with its redacted observation after. `retake` takes an
 * unfinished claim again, only for a tool that is idempotent.
 */
export interface CallClaims {
  claim(key: string, call: { runId: string; callId: string; tool: string }): Promise<ClaimOutcome>;
  /** Takes attempt `attempt` (as `claim` found it) again; only one node can. */
  retake(key: string, attempt: number): Promise<ClaimOutcome>;
  settle(key: string, status: 'completed' | 'failed', stored: unknown): Promise<void>;
  /**
   * The claim of a key as it stands, without taking it: null when there is none (or it cannot
   * be read now); `mine` when this node made it.
   */
  peek(
    key: string,
  ): Promise<{ readonly node: string; readonly mine: boolean; readonly outcome: ClaimOutcome } | null>;
}

function resourceOf(decision: Decision): string | null {
  const t = decision.targets[0];
  return t ? (t.resolved ?? t.input) : null;
}

/**
 * Executes one allowed or approved call exactly once, behind the ledger (DESIGN.md §3):
 * a completed call returns its stored result and never runs again; a failed one reports its
 * stored failure; a call found interrupted by a crash is retried only when its tool is
 * idempotent, otherwise reported to the model as `tool.interrupted`. The `started` row and its
 * audit event are one transaction, written before the tool runs; the result and its audit
 * `completed` event are one transaction after.
 *
 * With `argsLost` (the call's arguments were read back altered by redaction, see
 * `argsLostAtRest`) the call never runs with them: a stored outcome is still reused, anything
 * else is reported `tool.interrupted` without a ledger row or a retry.
 *
 * A call a human approved (or a standing approval allowed) runs only with the arguments bound to
 * that approval (approval-binding.ts): on a mismatch nothing runs, the refusal is audited
 * (`call_refused`) and the model sees a `tool.denied` with `approval_args_mismatch`. The audit
 * `started` event of such a call carries the hash of the arguments it ran with.
 */
export async function executeOnce(
  input: ExecuteInput,
  deps: ExecuteDeps,
  options: { readonly argsLost?: boolean } = {},
): Promise<Observation> {
  const { call, decision, idempotencyKey, runId } = input;
  const base = { callId: call.id, tool: call.tool };
  const existing = deps.store.ledger.lookup(idempotencyKey);
  if (existing?.status === 'completed') {
    const usage = (
      existing.result as { usage?: { modelCalls: number; toolCalls: number; tokens?: ModelUsage } } | null
    )?.usage;
    return { kind: 'tool.result', ...base, content: contentOf(existing.result), ...(usage ? { usage } : {}) };
  }
  if (existing?.status === 'failed')
    return { kind: 'tool.failed', ...base, message: contentOf(existing.error) };
  if (options.argsLost === true) return notRunArgsLost(input, deps, existing?.status ?? null);
  const binding = checkBinding(input, deps);
  if (!binding.ok) return refuseUnbound(input, deps, existing?.status ?? null, binding.detail);

  const tool = deps.registry.get(call.tool);
  const executor = Object.hasOwn(deps.executors, call.tool) ? deps.executors[call.tool] : undefined;
  const meta = deps.runMeta(runId);
  const callInput = {
    idempotencyKey,
    callId: call.id,
    runId,
    sessionId: meta.sessionId,
    agentId: meta.agentId,
    surface: meta.surface,
    tool: call.tool,
    risk: decision.risk,
    ruleId: decision.rule.id,
    resource: resourceOf(decision),
    standingApprovalId: decision.rule.source === 'standing-approval' ? decision.rule.id : null,
    ...(binding.argsHash === null
      ? {}
      : {
          detail: {
            argsHash: binding.argsHash,
            ...(binding.approvalId === undefined ? {} : { approvalId: binding.approvalId }),
          },
        }),
  };
  if (
    existing === null &&
    deps.claims !== undefined &&
    (decision.risk === 'external' || !isIdempotent(tool))
  ) {
    const elsewhere = await madeElsewhere(
      input,
      deps,
      deps.claims,
      callInput,
      isIdempotent(tool) && executor !== undefined,
    );
    if (elsewhere !== null) return elsewhere;
  }
  if (existing?.status === 'interrupted' || existing?.status === 'started') {
    // A `started` row seen here was cut by a crash (this life never re-enters a running call).
    if (existing.status === 'started') deps.store.ledger.markInterrupted({ runId });
    const idempotent = tool?.status === 'ok' && tool.metadata.idempotent === true;
    if (!idempotent || executor === undefined) {
      return {
        kind: 'tool.interrupted',
        ...base,
        message:
          'the call was interrupted by a restart and its tool is not idempotent, so it was not run again; check its effect before retrying',
      };
    }
    deps.store.transaction(() => deps.store.ledger.retryInterrupted(idempotencyKey, { durable: true }), {
      durable: 'deferred',
    });
    await durablyStarted(deps.store, idempotencyKey);
  } else {
    const durable = decision.risk === 'external';
    const begin = () => deps.store.ledger.beginCall(callInput, { durable });
    // An external call's `started` row is durable before the tool runs: committed now, then the
    // next shared fsync (group commit: concurrent runs' durable points share one).
    const begun = durable ? deps.store.transaction(begin, { durable: 'deferred' }) : begin();
    if (!begun.created) return executeOnce(input, deps);
    if (durable) await durablyStarted(deps.store, idempotencyKey);
  }
  if (deps.claims !== undefined && (decision.risk === 'external' || !isIdempotent(tool))) {
    const settled = await claimCall(input, deps, deps.claims, isIdempotent(tool) && executor !== undefined);
    if (settled !== null) return settled;
  }
  if (executor === undefined) {
    deps.store.ledger.failCall(idempotencyKey, {
      code: 'no_executor',
      message: `no executor for tool ${call.tool}`,
    });
    return { kind: 'tool.failed', ...base, message: `the runtime has no executor for ${call.tool}` };
  }
  const args = (call.args ?? {}) as Record<string, unknown>;
  try {
    let usage: { modelCalls: number; toolCalls: number; tokens?: ModelUsage } | undefined;
    deps.beforeRun?.({ runId, callId: call.id, sessionId: meta.sessionId, tool: call.tool, decision });
    const result = await executor.execute(args, {
      ...deps.contextFor(runId),
      runId,
      callId: call.id,
      idempotencyKey,
      decision,
      reportUsage: (u) =>
        (usage = {
          modelCalls: u.modelCalls,
          toolCalls: u.toolCalls,
          ...(u.tokens === undefined ? {} : { tokens: u.tokens }),
        }),
    });
    const observed = deps.observe({ ok: true, result });
    await deps.claims?.settle(idempotencyKey, 'completed', usage ? { ...observed, usage } : observed);
    deps.store.ledger.completeCall(idempotencyKey, usage ? { ...observed, usage } : observed);
    return { kind: 'tool.result', ...base, content: observed.content, ...(usage ? { usage } : {}) };
  } catch (err) {
    const observed = deps.observe({ ok: false, error: err });
    await deps.claims?.settle(idempotencyKey, 'failed', observed);
    deps.store.ledger.failCall(idempotencyKey, observed);
    return { kind: 'tool.failed', ...base, message: observed.content };
  }
}

/**
 * Cluster mode, a call with no local row: when another node made it (the run was taken over
 * after it ran there, or while it ran), its outcome is recorded here as made elsewhere — no
 * `started` row or event, as this node did not run it — and returned. Null: nobody else claimed
 * it (or its unfinished claim may be taken again, the tool being idempotent): run it as usual.
 */
async function madeElsewhere(
  input: ExecuteInput,
  deps: ExecuteDeps,
  claims: CallClaims,
  callInput: Parameters<Store['ledger']['recordElsewhere']>[0],
  retryable: boolean,
): Promise<Observation | null> {
  const seen = await claims.peek(input.idempotencyKey);
  if (seen === null || seen.mine) return null;
  const base = { callId: input.call.id, tool: input.call.tool };
  const { outcome, node } = seen;
  if (outcome.state === 'completed' || outcome.state === 'failed') {
    const recorded = deps.store.ledger.recordElsewhere(callInput, {
      status: outcome.state,
      node,
      stored: outcome.stored,
    });
    if (!recorded.created) return executeOnce(input, deps);
    return outcome.state === 'completed'
      ? { kind: 'tool.result', ...base, content: contentOf(outcome.stored) }
      : { kind: 'tool.failed', ...base, message: contentOf(outcome.stored) };
  }
  if (outcome.state !== 'taken' || retryable) return null;
  const recorded = deps.store.ledger.recordElsewhere(callInput, {
    status: 'interrupted',
    node,
    stored: null,
  });
  if (!recorded.created) return executeOnce(input, deps);
  return {
    kind: 'tool.interrupted',
    ...base,
    message: `the call was started on node ${node}, which stopped before it finished, and its tool is not idempotent, so it was not run again; check its effect before retrying`,
  };
}

/**
 * Reports a call whose arguments were altered at rest without running it. A `started` row (cut
 * by a crash) is closed `interrupted` by the ledger, with its audit event; with no row, the
 * audit `interrupted` event is written here and the ledger records nothing. In a cluster, a call
 * the claims cover is asked about first (another node may have run it before the run moved
 * here): its outcome there is reused, and an unclaimed call is settled `failed` cluster-wide so
 * that no node runs it later.
 */
async function notRunArgsLost(
  input: ExecuteInput,
  deps: ExecuteDeps,
  row: string | null,
): Promise<Observation> {
  const { call, decision, idempotencyKey, runId } = input;
  const base = { callId: call.id, tool: call.tool };
  if (
    row === null &&
    deps.claims !== undefined &&
    (decision.risk === 'external' || !isIdempotent(deps.registry.get(call.tool)))
  ) {
    const elsewhere = await settledElsewhere(input, deps.claims);
    if (elsewhere !== null) return elsewhere;
  }
  if (row === 'started') deps.store.ledger.markInterrupted({ runId });
  else if (row === null && !refusedBefore(deps.store, runId, call.id)) {
    deps.store.audit.append({
      ...deps.runMeta(runId),
      runId,
      callId: call.id,
      tool: call.tool,
      risk: decision.risk,
      ruleId: decision.rule.id,
      resource: resourceOf(decision),
      status: 'interrupted',
      kind: 'interrupted',
      detail: { idempotencyKey, cause: ARGS_NOT_KEPT_CAUSE },
    });
  }
  // An `interrupted` row already has its audit event.
  return { kind: 'tool.interrupted', ...base, message: ARGS_NOT_KEPT_MESSAGE };
}

/**
 * Refuses a call whose arguments are not the ones approved: nothing runs, a `started` row cut by
 * a crash is closed `interrupted`, one `call_refused` event records why (a replay of the step
 * does not record it twice), and the model is told with a denial it can act on.
 */
function refuseUnbound(
  input: ExecuteInput,
  deps: ExecuteDeps,
  row: string | null,
  detail: Readonly<Record<string, unknown>>,
): Observation {
  const { call, decision, idempotencyKey, runId } = input;
  if (row === 'started') deps.store.ledger.markInterrupted({ runId });
  if (!deps.store.audit.has(runId, call.id, 'call_refused')) {
    deps.store.audit.append({
      ...deps.runMeta(runId),
      runId,
      callId: call.id,
      tool: call.tool,
      risk: decision.risk,
      ruleId: decision.rule.id,
      resource: resourceOf(decision),
      status: APPROVAL_ARGS_MISMATCH,
      kind: 'call_refused',
      detail: { idempotencyKey, ...detail },
    });
  }
  return {
    kind: 'tool.denied',
    callId: call.id,
    tool: call.tool,
    reason: APPROVAL_ARGS_MISMATCH,
    message: APPROVAL_ARGS_MISMATCH_MESSAGE,
  };
}

/**
 * What the cluster knows of a call this node will not run: null when this node claimed it (and
 * settled it `failed`, so it never runs anywhere), else the observation of its outcome elsewhere.
 */
async function settledElsewhere(input: ExecuteInput, claims: CallClaims): Promise<Observation | null> {
  const { call, idempotencyKey, runId } = input;
  const base = { callId: call.id, tool: call.tool };
  const outcome = await claims.claim(idempotencyKey, { runId, callId: call.id, tool: call.tool });
  switch (outcome.state) {
    case 'claimed':
      await claims.settle(idempotencyKey, 'failed', { content: ARGS_NOT_KEPT_MESSAGE });
      return null;
    case 'completed':
      return { kind: 'tool.result', ...base, content: contentOf(outcome.stored) };
    case 'failed':
      return { kind: 'tool.failed', ...base, message: contentOf(outcome.stored) };
    case 'taken':
      return {
        kind: 'tool.interrupted',
        ...base,
        message: `the call was started on node ${outcome.node}, which stopped before it finished; it was not run again here, as its arguments held redacted values that were not kept; check its effect before retrying`,
      };
    case 'unavailable':
      return {
        kind: 'tool.interrupted',
        ...base,
        message: `${ARGS_NOT_KEPT_MESSAGE}; whether another node ran it could not be checked (${outcome.message}), so check its effect first`,
      };
  }
}

/** Whether an earlier life of a restored run already reported this call not run (its step replays). */
function refusedBefore(store: Store, runId: string, callId: string): boolean {
  return store.audit.has(runId, callId, 'interrupted');
}

/**
 * Waits until the `started` row of `key` is on stable storage. The write may have joined an
 * enclosing transaction (a decision delivered inside one), which is over by the time the sync
 * starts; that it did not roll back is checked after, so a tool never runs without its row.
 */
async function durablyStarted(store: Store, key: string): Promise<void> {
  await store.syncAfterCommit();
  if (store.ledger.lookup(key)?.status !== 'started') {
    throw new Error(`the ledger has no started row for call ${key} after its durable write; it was not run`);
  }
}

/** The model-visible content of a stored observation (ledger rows hold what the model saw). */
function contentOf(stored: unknown): string {
  const content = (stored as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : 'the stored result is unreadable';
}

function isIdempotent(tool: ReturnType<ToolRegistry['get']>): boolean {
  return tool?.status === 'ok' && tool.metadata.idempotent === true;
}

/**
 * Claims a call cluster-wide after its local `started` row is written. Null: this node holds the
 * claim and runs the call. Otherwise the observation to return, with the local ledger brought in
 * line: another node's stored outcome is reused, an unfinished claim is reported interrupted
 * (or taken again when the tool is idempotent), and no claim means no call.
 */
async function claimCall(
  input: ExecuteInput,
  deps: ExecuteDeps,
  claims: CallClaims,
  retryable: boolean,
): Promise<Observation | null> {
  const { call, idempotencyKey, runId } = input;
  const base = { callId: call.id, tool: call.tool };
  let outcome = await claims.claim(idempotencyKey, { runId, callId: call.id, tool: call.tool });
  if (outcome.state === 'taken' && retryable) outcome = await claims.retake(idempotencyKey, outcome.attempt);
  switch (outcome.state) {
    case 'claimed':
      return null;
    case 'completed':
      deps.store.ledger.completeCall(idempotencyKey, outcome.stored);
      return { kind: 'tool.result', ...base, content: contentOf(outcome.stored) };
    case 'failed':
      deps.store.ledger.failCall(idempotencyKey, outcome.stored);
      return { kind: 'tool.failed', ...base, message: contentOf(outcome.stored) };
    case 'unavailable':
      deps.store.ledger.failCall(idempotencyKey, { code: 'claim_unavailable', message: outcome.message });
      return { kind: 'tool.failed', ...base, message: outcome.message };
    case 'taken':
      deps.store.ledger.markInterrupted({ runId });
      return {
        kind: 'tool.interrupted',
        ...base,
        message: `the call was started on node ${outcome.node}, which stopped before it finished, and its tool is not idempotent, so it was not run again; check its effect before retrying`,
      };
  }
}
