/**
 * Pure helpers of the run machine over the calls of the current model step: which call is being
 * handled, its signature for counting repeated denials, and the observations the model is shown.
 */
import { REASON_TEXT } from '../../policy/explain.ts';
import type { Observation, ProposedCall, RunContext, TranscriptEntry } from './types.ts';

/** The stable signature of a call, for counting repeated denials. */
export function callSignature(call: ProposedCall): string {
  return `${call.tool}\u0000${JSON.stringify(call.args) ?? 'undefined'}`;
}

/** The call at the cursor; throws when there is none (a machine bug, never a model's doing). */
export function current(ctx: RunContext): ProposedCall {
  const call = ctx.calls[ctx.cursor];
  if (call === undefined) throw new Error(`run ${ctx.runId}: no call at position ${ctx.cursor}`);
  return call;
}

/** The transcript with `observation` appended. */
export function observe(ctx: RunContext, observation: Observation): readonly TranscriptEntry[] {
  return [...ctx.transcript, { role: 'observation', observation }];
}

/**
 * The `tool.denied` observation of a call: `message` when given (a human's reason, an expiry),
 * else the explanation of the decision's reason code, else the code itself.
 */
export function deniedObservation(
  call: ProposedCall,
  d: { readonly reason: string },
  message?: string,
): Observation {
  return {
    kind: 'tool.denied',
    callId: call.id,
    tool: call.tool,
    reason: d.reason,
    message: message ?? REASON_TEXT[d.reason as keyof typeof REASON_TEXT] ?? d.reason,
  };
}
