import type { Redactor } from '../../store/index.ts';
import type { ModelStepOutput, ProposedCall } from '../../machines/run/types.ts';

/**
 * What the model is told about a call that was not run because its arguments held values the
 * store redacts and the run was brought back from its stored snapshot.
 */
export const ARGS_NOT_KEPT_MESSAGE =
  "this call's arguments held redacted values and were not kept across the restart, so it was not run; propose it again if it is still needed";

/** The audit `detail.cause` of such a call (an audit detail, not a Decision reason code). */
export const ARGS_NOT_KEPT_CAUSE = 'arguments_redacted_at_rest';

/**
 * Whether storing `args` would alter them: the store keeps `redactor.redact(args)` as JSON, so
 * the args survive a restart unchanged exactly when that JSON is theirs.
 */
export function alteredAtRest(redactor: Redactor, args: unknown): boolean {
  return JSON.stringify(redactor.redact(args)) !== JSON.stringify(args);
}

/** Whether `value` holds the redactor's censor text in any string or object key. */
export function holdsCensor(censor: string, value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes(censor);
  // Deeper than the redactor walks, stored data holds `[Truncated]`, never the args: fail closed.
  if (depth > 64) return true;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some((v) => holdsCensor(censor, v, depth + 1));
  return Object.entries(value).some(([k, v]) => k.includes(censor) || holdsCensor(censor, v, depth + 1));
}

/**
 * A model step's answer with each call whose arguments the store would alter marked
 * `argsRedactedAtRest` (the flag travels with the call into the run's stored snapshot).
 */
export function markRedactedAtRest(output: ModelStepOutput, redactor: Redactor): ModelStepOutput {
  if (output.kind !== 'calls') return output;
  let changed = false;
  const calls = output.calls.map((c): ProposedCall => {
    if (alteredAtRest(redactor, c.args)) {
      changed = true;
      return { ...c, argsRedactedAtRest: true };
    }
    if (c.argsRedactedAtRest === undefined) return c;
    // The flag is the runtime's finding, never the model's: an answer that carries one drops it.
    changed = true;
    return { id: c.id, tool: c.tool, args: c.args };
  });
  if (!changed) return output;
  return { ...output, calls };
}

/**
 * Whether a call about to run carries arguments the store altered: it did not come from a model
 * step of this process (`live` false: its args were read from a stored snapshot) and either it
 * was marked when proposed, or its args now hold the censor text (the redactor may have learned
 * a secret between the model step and the write). A live call always runs as the model wrote it,
 * even when the model wrote the censor text itself.
 */
export function argsLostAtRest(call: ProposedCall, live: boolean, redactor: Redactor): boolean {
  if (live) return false;
  return call.argsRedactedAtRest === true || holdsCensor(redactor.censor, call.args);
}
