import type { RunContext } from './types.ts';

/** Longest failure message kept in a run's outcome (the rest is cut, marked with `…`). */
export const MAX_FAILURE_MESSAGE = 1000;

function clip(text: string): string {
  return text.length > MAX_FAILURE_MESSAGE ? `${text.slice(0, MAX_FAILURE_MESSAGE - 1)}…` : text;
}

/**
 * What an error says, for a run's outcome: `code: message` when the error carries a snake_case
 * code. The store redacts it (registered secrets, credential shapes) before it is persisted.
 */
export function errorText(error: unknown): string {
  if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
    const e = error as { message?: unknown; code?: unknown };
    const message =
      typeof e.message === 'string' && e.message !== '' ? e.message : 'an error without a message';
    const code = typeof e.code === 'string' && /^[a-z][a-z0-9_]*$/.test(e.code) ? `${e.code}: ` : '';
    return clip(`${code}${message}`);
  }
  return clip(`an error was thrown: ${String(error)}`);
}

/**
 * The human-readable message of a failed run's reason code. `error` is the error of the effect
 * that failed, when one did (model step, policy decision, approval record).
 */
export function failureMessage(reason: string, ctx: RunContext, error: unknown): string {
  const cause = error === undefined ? '' : `: ${errorText(error)}`;
  switch (reason) {
    case 'model_error':
      return clip(`the model failed at step ${ctx.steps}${cause}`);
    case 'policy_error':
      return clip(`the policy could not decide a call${cause}`);
    case 'approval_store_error':
      return clip(`the approval request could not be recorded${cause}`);
    case 'budget_model_calls':
      return `the run used its whole model-call budget (${ctx.budget.modelCalls})`;
    case 'budget_tool_calls':
      return `the run used its whole tool-call budget (${ctx.budget.toolCalls})`;
    case 'budget_tokens':
      return `the run used its whole token budget (${ctx.budget.tokens ?? 0})`;
    case 'budget_cost':
      return `the run used its whole cost budget (${ctx.budget.costUsd ?? 0} USD)`;
    case 'budget_wall_time':
      return `the run passed its wall-time budget (${ctx.budget.wallTimeMs} ms)`;
    case 'repeated_denied_call':
      return 'the model proposed the same denied call again';
    default:
      return clip(`${reason}${cause}`);
  }
}
