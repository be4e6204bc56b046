// The scenarios of the run machine's model-based restart tests and the invariants every run keeps.
import { expect } from 'vitest';
import type { RunContext, RunOutcome } from '../../machines/run/types.ts';
import type { Store } from '../../store/index.ts';
import { assertLifecycles } from '../support/lifecycle.ts';
import { CallKind, needsApproval, type RunRecord, type Scenario } from './harness.ts';

/** What one run left: its outcome, the executions of every process, its last persisted context. */
export interface RunResult {
  readonly outcome: RunOutcome;
  readonly record: Pick<RunRecord, 'executions' | 'executedBeforeApproval'> &
    Partial<Pick<RunRecord, 'executedAgainAfterDone'>>;
  readonly context: RunContext | null;
}

const KINDS = Object.values(CallKind);

/** Every scenario: one step of one call of each kind, two calls of every pair of kinds, and budget limits. */
export function scenarios(): Scenario[] {
  const out: Scenario[] = [{ name: 'final-only', steps: [], toolBudget: 5, modelBudget: 5 }];
  for (const a of KINDS) out.push({ name: a, steps: [[a]], toolBudget: 5, modelBudget: 5 });
  for (const a of KINDS)
    for (const b of KINDS) out.push({ name: `${a}+${b}`, steps: [[a, b]], toolBudget: 5, modelBudget: 5 });
  out.push({
    name: 'two-steps',
    steps: [[CallKind.allowOk], [CallKind.approveOk]],
    toolBudget: 5,
    modelBudget: 5,
  });
  out.push({
    name: 'tool-budget',
    steps: [[CallKind.allowOk, CallKind.approveOk]],
    toolBudget: 1,
    modelBudget: 5,
  });
  out.push({
    name: 'model-budget',
    steps: [[CallKind.allowOk], [CallKind.allowOk]],
    toolBudget: 5,
    modelBudget: 1,
  });
  // Past its budget, the run parks on a budget request; each approved, it goes on (+1 model call).
  out.push({
    name: 'model-budget-park',
    steps: [[CallKind.allowOk], [CallKind.approveOk]],
    toolBudget: 5,
    modelBudget: 1,
    onBudget: 'ask',
  });
  return out;
}

/** The invariants of one finished run (DESIGN.md §3, invariant 10). */
export function check(store: Store, s: Scenario, runId: string, r: RunResult): void {
  const where = `${s.name} (${runId})`;
  expect(['completed', 'failed', 'denied'], where).toContain(r.outcome.status);
  for (const [key, n] of r.record.executions) {
    // An idempotent read may run once more after an interruption (one restart here): never more.
    expect(n, `${where}: ${key} executions`).toBeLessThanOrEqual(2);
  }
  expect(r.record.executedBeforeApproval, `${where}: executed before its approval`).toEqual([]);
  // A call completed (or failed) before the crash is never executed again, an idempotent read included.
  expect(r.record.executedAgainAfterDone ?? [], `${where}: executed again after it completed`).toEqual([]);
  // Denied, expired and policy-denied calls never ran; approved external calls ran at most once.
  // A denied or expired approval ends the run (`denied`): the calls after it never run.
  let ended = false;
  for (const [stepIndex, calls] of s.steps.entries()) {
    calls.forEach((kind, i) => {
      const key = `call:${runId}:s${stepIndex}c${i}`;
      const n = r.record.executions.get(key) ?? 0;
      if (kind === CallKind.deny || kind === CallKind.approvalDenied || kind === CallKind.approvalExpired)
        expect(n, `${where}: ${key} (${kind}) ran`).toBe(0);
      // Without a crash, and within budget, every allowed or approved call ran exactly once.
      const ran =
        kind === CallKind.allowOk ||
        kind === CallKind.allowFail ||
        kind === CallKind.approveOk ||
        kind === CallKind.approveFail;
      if (runId.endsWith(':base') && !s.name.includes('budget') && ran && !ended)
        expect(n, `${where}: ${key} (${kind})`).toBe(1);
      if (ended) expect(n, `${where}: ${key} (${kind}) after the run was denied`).toBe(0);
      if (kind === CallKind.approvalDenied || kind === CallKind.approvalExpired) ended = true;
      // External, not idempotent: at most once, whatever happened (the mutant test looks for this).
      if (needsApproval(kind)) expect(n, `${where}: ${key} (${kind}) executions`).toBeLessThanOrEqual(1);
    });
  }
  if (r.context !== null) {
    expect(r.context.used.toolCalls, where).toBeLessThanOrEqual(s.toolBudget);
    // A run that parks on its budget goes past it only by what a human granted.
    const granted = r.context.granted?.modelCalls ?? 0;
    expect(r.context.used.modelCalls, where).toBeLessThanOrEqual(s.modelBudget + granted);
    if (s.onBudget === undefined) expect(granted, where).toBe(0);
  }
  assertLifecycles(store, runId);
}
