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

/**
 * How often the censor text appears in `value`'s strings and object keys. Past the depth the
 * redactor walks, it is infinite: such data is never compared equal (fail closed).
 */
export function censorCount(censor: string, value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.split(censor).length - 1;
  if (typeof value !== 'object' || value === null) return 0;
  if (depth > 64) return Number.POSITIVE_INFINITY;
  let n = 0;
  if (Array.isArray(value)) for (const v of value) n += censorCount(censor, v, depth + 1);
  else
    for (const [k, v] of Object.entries(value))
      n += k.split(censor).length - 1 + censorCount(censor, v, depth + 1);
  return n;
}

/**
 * A model step's answer with each call whose arguments the store would alter marked
 * `argsRedactedAtRest`, and each call whose arguments hold the censor text themselves (the model
 * wrote it) given `argsCensorCount`; both travel with the call into the run's stored snapshot.
 * Values the model put in these fields are replaced by the runtime's own findings.
 */
export function markRedactedAtRest(output: ModelStepOutput, redactor: Redactor): ModelStepOutput {
  if (output.kind !== 'calls') return output;
  let changed = false;
  const calls = output.calls.map((c): ProposedCall => {
    const altered = alteredAtRest(redactor, c.args);
    const count = censorCount(redactor.censor, c.args);
    const marked: ProposedCall = {
      id: c.id,
      tool: c.tool,
      args: c.args,
      ...(altered ? { argsRedactedAtRest: true as const } : {}),
      ...(count > 0 && Number.isFinite(count) ? { argsCensorCount: count } : {}),
    };
    const same =
      marked.argsRedactedAtRest === c.argsRedactedAtRest &&
      marked.argsCensorCount === c.argsCensorCount &&
      Object.keys(c).length === Object.keys(marked).length;
    if (same) return c;
    changed = true;
    return marked;
  });
  return changed ? { ...output, calls } : output;
}

/**
 * Whether a call about to run carries arguments the store altered: it did not come from a model
 * step of this process (`live` false: its args were read from a stored snapshot) and either it
 * was marked when proposed, or its args now hold the censor text more often than the model
 * wrote it (the redactor may have learned a secret after the model step, before a later write).
 * A live call always runs as the model wrote it, and so does a restored one whose censor text
 * is all the model's own.
 */
export function argsLostAtRest(call: ProposedCall, live: boolean, redactor: Redactor): boolean {
  if (live) return false;
  if (call.argsRedactedAtRest === true) return true;
  return censorCount(redactor.censor, call.args) !== (call.argsCensorCount ?? 0);
}

/** How many bytes of exact arguments `KeptArgs` holds at most (of JSON text), oldest dropped first. */
export const KEPT_ARGS_MAX_BYTES = 32 << 20;

/**
 * The exact arguments of calls this process proposed that the store keeps only redacted, by run
 * and call, in memory only: a run parked on such a call and brought back by its decision in this
 * process runs it as the model wrote it, like a run that stayed live. After a restart (or once
 * dropped, past KEPT_ARGS_MAX_BYTES) they are gone and the call is not run (`argsLostAtRest`).
 */
export class KeptArgs {
  readonly #byCall = new Map<string, { readonly call: ProposedCall; readonly bytes: number }>();
  #bytes = 0;

  keep(runId: string, call: ProposedCall): void {
    const key = `${runId}\u0000${call.id}`;
    const bytes = JSON.stringify(call.args)?.length ?? 0;
    this.#drop(key);
    if (bytes > KEPT_ARGS_MAX_BYTES) return;
    this.#byCall.set(key, { call, bytes });
    this.#bytes += bytes;
    for (const [oldest] of this.#byCall) {
      if (this.#bytes <= KEPT_ARGS_MAX_BYTES) break;
      this.#drop(oldest);
    }
  }

  /**
   * The call as the model proposed it, for `stored` read back from a snapshot (once: it is then
   * forgotten), or null when none is kept or the stored call is not its redacted form (another
   * tool, other arguments).
   */
  take(runId: string, stored: ProposedCall, redactor: Redactor): ProposedCall | null {
    const key = `${runId}\u0000${stored.id}`;
    const entry = this.#byCall.get(key);
    if (entry === undefined) return null;
    this.#drop(key);
    const same =
      entry.call.tool === stored.tool &&
      JSON.stringify(redactor.redact(entry.call.args)) === JSON.stringify(redactor.redact(stored.args));
    return same ? entry.call : null;
  }

  /** Forgets a call's kept arguments (it ran live, with them). */
  forget(runId: string, callId: string): void {
    this.#drop(`${runId}\u0000${callId}`);
  }

  #drop(key: string): void {
    const entry = this.#byCall.get(key);
    if (entry === undefined) return;
    this.#byCall.delete(key);
    this.#bytes -= entry.bytes;
  }
}
