import { fromPromise } from 'xstate';
import type { Decision } from '../../policy/decision.ts';
import type { PolicyContext } from '../../policy/context.ts';
import { evaluate } from '../../policy/evaluate.ts';
import { argsHash } from '../../policy/provenance/args-hash.ts';
import { policyHash } from '../../policy/provenance/policy-hash.ts';
import type { ApprovalRecord, Redactor, Store } from '../../store/index.ts';
import { auditFieldsFromDecision } from '../../store/index.ts';
import type {
  AuditStep,
  ExecuteInput,
  ModelStepOutput,
  Observation,
  OpenApprovalInput,
  OpenBudgetInput,
  ProposedCall,
  RunContext,
} from '../../machines/run/types.ts';
import { runMachine } from '../../machines/run/machine.ts';
import { BUDGET_REASON } from '../../machines/run/budget.ts';
import type { ModelProvider, ModelStepRequest, ModelTool } from '../model/provider.ts';
import { modelTools } from '../model/tool-schemas.ts';
import { argsLostAtRest, KeptArgs, markRedactedAtRest } from './args-at-rest.ts';
import { executeOnce, type ExecuteDeps } from './execute.ts';

/**
 * Who hears what a run does, as it happens (the runtime's live feed). Called synchronously from
 * the run's effects and actions; must not throw. Values are raw: the receiver redacts.
 */
export interface RunReporter {
  modelOutput(context: RunContext, output: ModelStepOutput): void;
  /** A piece of a model step's text as it streams in (raw: the receiver holds back and redacts). */
  modelDelta?(context: RunContext, delta: string): void;
  proposed(context: RunContext, call: ProposedCall): void;
  decided(context: RunContext, call: ProposedCall, decision: Decision): void;
  /** An observation was appended to the transcript (what the model will see). */
  observed(context: RunContext, observation: Observation): void;
}

/** What the run effects need from the runtime. */
/** An invoked effect of a run about to return: its source name and what it returns. */
export interface SettledEffect {
  readonly src: string;
  readonly output: unknown;
}

export interface RunEffectDeps extends ExecuteDeps {
  readonly store: Store;
  readonly model: ModelProvider;
  /** The policy context for a run's next call (approvals and roots as they are now). */
  readonly policyFor: (context: RunContext) => PolicyContext;
  /** How long an approval request stays open, in ms. */
  readonly approvalTtlMs: number;
  readonly clock: () => number;
  /** Called once an approval record exists (new or found again after a restart). */
  readonly onApprovalOpened: (approval: ApprovalRecord, context: RunContext) => void;
  /**
   * Writes the run's current state (waiting for the approval being opened) into the store now:
   * called inside the approval's transaction, so the two commit together. Written as it will be
   * once `settled.src` (the effect calling it) has returned `settled.output`: the run's park then
   * finds the row already as it would write it, and writes nothing.
   */
  readonly persistRun?: (runId: string, settled?: SettledEffect) => void;
  /** Whether a run was restored from a snapshot (its steps since that snapshot replay). */
  readonly replaying?: (runId: string) => boolean;
  /** Receives a model step's answer text as it streams in (e.g. for `model.text` events). */
  readonly onModelText?: (runId: string, delta: string) => void;
  /** The live feed; nothing is reported without one. */
  readonly report?: RunReporter;
  /**
   * What a model step is sent besides the run's own transcript: its session's history before it,
   * the system prompt, the agents whose model it may inherit, fitted to the model's context
   * window (runtime/sessions). Without it a step sends the run's transcript alone.
   */
  readonly prepareStep?: (
    context: RunContext,
    policy: PolicyContext,
    tools: readonly ModelTool[],
  ) => Pick<ModelStepRequest, 'transcript' | 'system' | 'inheritFrom'>;
}

/** A replayed step of a restored run whose audit event is already recorded is not recorded again. */
function alreadyAudited(
  deps: RunEffectDeps,
  ctx: RunContext,
  callId: string | undefined,
  kind: AuditStep,
): boolean {
  if (callId === undefined || deps.replaying?.(ctx.runId) !== true) return false;
  return deps.store.audit.has(ctx.runId, callId, kind);
}

/** An error with the message of `err` (and its snake_case code) redacted, for a run's outcome. */
function redactedError(err: unknown, redactor: Redactor): Error {
  const e = err as { message?: unknown; code?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const out = new Error(redactor.redactString(message));
  if (typeof e?.code === 'string') Object.assign(out, { code: redactor.redactString(e.code) });
  return out;
}

function auditBase(ctx: RunContext, call: ProposedCall | undefined) {
  return {
    sessionId: ctx.sessionId,
    agentId: ctx.agentId,
    surface: ctx.surface,
    runId: ctx.runId,
    callId: call?.id ?? null,
    tool: call?.tool ?? null,
  };
}

/**
 * The run machine provided with its real effects: the model provider, the one policy engine,
 * the Inbox and the ledger-protected executor. Audit events `proposed` and `policy_decided` are
 * written here; `approval_requested`/`approval_resolved` by the Inbox and `started`/`completed`
 * by the ledger, each in the same transaction as the state it records.
 */
export function provideRunMachine(deps: RunEffectDeps) {
  // The calls this process's model steps proposed, as the objects the live run holds: a call
  // that is not one of them was read back from a stored snapshot (with its arguments redacted).
  const proposedHere = new WeakSet<ProposedCall>();
  const kept = new KeptArgs();
  return runMachine.provide({
    actors: {
      modelStep: fromPromise(async ({ input }: { input: { context: RunContext } }) => {
        const ctx = input.context;
        const exec = deps.contextFor(ctx.runId);
        let output: ModelStepOutput;
        try {
          const policy = deps.policyFor(ctx);
          const tools = modelTools(policy.registry, policy.tools);
          output = await deps.model.step({
            runId: ctx.runId,
            agentId: ctx.agentId,
            step: ctx.steps,
            transcript: ctx.transcript,
            ...deps.prepareStep?.(ctx, policy, tools),
            tools,
            secrets: exec.secrets,
            signal: exec.signal,
            ...(deps.onModelText || deps.report?.modelDelta
              ? {
                  onText: (delta: string) => {
                    deps.onModelText?.(ctx.runId, delta);
                    deps.report?.modelDelta?.(ctx, delta);
                  },
                }
              : {}),
          });
        } catch (err) {
          // Stopped by a shutdown: the step never settles, so the run is persisted mid-step and
          // asks again after the restart instead of failing.
          if (exec.signal.aborted) return new Promise<never>(() => {});
          // The run's failure message is shown and stored: scrub it of every registered secret first.
          throw redactedError(err, deps.store.redactor);
        }
        output = markRedactedAtRest(output, deps.store.redactor);
        if (output.kind === 'calls')
          for (const call of output.calls) {
            proposedHere.add(call);
            if (call.argsRedactedAtRest === true) kept.keep(ctx.runId, call);
          }
        deps.report?.modelOutput(ctx, output);
        return output;
      }),
      decide: fromPromise(
        async ({ input }: { input: { context: RunContext; call: ProposedCall } }): Promise<Decision> => {
          try {
            return evaluate({ tool: input.call.tool, args: input.call.args }, deps.policyFor(input.context));
          } catch (err) {
            throw redactedError(err, deps.store.redactor);
          }
        },
      ),
      openApproval: fromPromise(
        async ({ input }: { input: OpenApprovalInput }): Promise<{ approvalId: string }> => {
          const { context, call, decision, approvalId } = input;
          const now = deps.clock();
          const target = decision.targets[0];
          // The approval binds the arguments as the model wrote them (a restored call whose
          // arguments were redacted at rest binds those: it never runs, see args-at-rest.ts).
          const hashed = argsHash(call.args);
          const policy = policyHash(deps.policyFor(context), call.tool);
          // Group commit: the request and its audit event commit now and become durable with the
          // next shared fsync; the run is reported waiting (and parked) only after it.
          const { approval, output } = deps.store.transaction(
            () => {
              const opened = deps.store.approvals.create({
                id: approvalId,
                callId: `${context.runId}:${call.id}`,
                runId: context.runId,
                sessionId: context.sessionId,
                taskId: context.taskId,
                agentId: context.agentId,
                parentRunId: context.parentRunId,
                parentAgentId: context.parentAgentId ?? null,
                surface: context.surface,
                tool: call.tool,
                args: call.args,
                target: target ? (target.resolved ?? target.input) : null,
                risk: decision.risk,
                reason: decision.reason,
                ruleId: decision.rule.id,
                idempotencyKey: `call:${context.runId}:${call.id}`,
                ...(hashed === null ? {} : { argsHash: hashed }),
                policyHash: policy,
                resumeCheckpoint: { runId: context.runId, callId: call.id, cursor: context.cursor },
                createdAt: now,
                expiresAt: now + deps.approvalTtlMs,
              });
              // What this effect returns: the run is written as it will be once it has.
              const output = { approvalId: opened.approval.id };
              deps.persistRun?.(context.runId, { src: 'openApproval', output });
              return { approval: opened.approval, output };
            },
            { durable: 'deferred' },
          );
          await deps.store.syncAfterCommit();
          deps.onApprovalOpened(approval, context);
          return output;
        },
      ),
      openBudgetRequest: fromPromise(
        async ({ input }: { input: OpenBudgetInput }): Promise<{ approvalId: string }> => {
          const { context, request, approvalId } = input;
          const now = deps.clock();
          // As a tool call's request: the Inbox item and the run waiting on it commit together.
          const { approval, output } = deps.store.transaction(
            () => {
              const opened = deps.store.approvals.create({
                id: approvalId,
                kind: 'budget',
                callId: `${context.runId}:${approvalId}`,
                runId: context.runId,
                sessionId: context.sessionId,
                taskId: context.taskId,
                agentId: context.agentId,
                parentRunId: context.parentRunId,
                parentAgentId: context.parentAgentId ?? null,
                surface: context.surface,
                tool: 'budget',
                args: request,
                target: `${request.dimension} +${request.grant}`,
                // A budget request runs nothing: it lets the run go on spending.
                risk: 'read',
                reason: BUDGET_REASON[request.dimension],
                ruleId: `budget.${request.dimension}`,
                idempotencyKey: approvalId,
                resumeCheckpoint: { runId: context.runId, budget: request },
                createdAt: now,
                expiresAt: now + deps.approvalTtlMs,
              });
              const output = { approvalId: opened.approval.id };
              deps.persistRun?.(context.runId, { src: 'openBudgetRequest', output });
              return { approval: opened.approval, output };
            },
            { durable: 'deferred' },
          );
          await deps.store.syncAfterCommit();
          deps.onApprovalOpened(approval, context);
          return output;
        },
      ),
      executeTool: fromPromise(async ({ input }: { input: ExecuteInput }): Promise<Observation> => {
        // A parked run brought back in this process: its call runs with the arguments the model
        // wrote (and the human approved), kept in memory, never with their stored redacted form.
        const live = proposedHere.has(input.call);
        if (live) kept.forget(input.runId, input.call.id);
        const exact = live ? input.call : kept.take(input.runId, input.call, deps.store.redactor);
        const call = exact ?? input.call;
        return executeOnce({ ...input, call }, deps, {
          argsLost: argsLostAtRest(call, exact !== null, deps.store.redactor),
        });
      }),
    },
    actions: {
      observed: ({ context }) => {
        const last = context.transcript[context.transcript.length - 1];
        if (last?.role === 'observation') deps.report?.observed(context, last.observation);
      },
      audit: ({ context }, params: { step: AuditStep }) => {
        const call = context.calls[context.cursor];
        if (alreadyAudited(deps, context, call?.id, params.step)) return;
        if (params.step === 'proposed') {
          deps.store.audit.appendDeferred({
            ...auditBase(context, call),
            kind: 'proposed',
            detail: { args: call?.args },
          });
          if (call !== undefined) deps.report?.proposed(context, call);
        } else if (params.step === 'policy_decided' && context.decision !== null) {
          const { detail, ...fields } = auditFieldsFromDecision(context.decision);
          deps.store.audit.appendDeferred({
            ...auditBase(context, call),
            ...fields,
            kind: 'policy_decided',
            detail,
          });
          if (call !== undefined) deps.report?.decided(context, call, context.decision);
        } else if (params.step === 'run_failed' && context.outcome !== null) {
          deps.store.audit.append({
            ...auditBase(context, undefined),
            kind: 'run_failed',
            status: 'failed',
            detail: { reason: context.outcome.reason, message: context.outcome.message ?? null },
          });
        }
        // `proposed` and `policy_decided` commit with what follows them (the approval, the ledger's
        // `started` row, or the turn's end: see appendDeferred). approval_requested/approval_resolved
        // are written by the Inbox in the same transaction as the approval row;
        // run_completed/run_denied are run states, persisted with the snapshot.
      },
    },
  });
}
