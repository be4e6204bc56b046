import { expect } from 'vitest';
import type { Store } from '../../store/index.ts';

/** The next steps the contract allows after each step of a call's audit lifecycle (DESIGN.md §3). */
const NEXT: Record<string, readonly string[]> = {
  '': ['proposed'],
  proposed: ['policy_decided'],
  policy_decided: ['approval_requested', 'started'],
  approval_requested: ['approval_resolved'],
  approval_resolved: ['started'],
  started: ['completed', 'failed', 'interrupted'],
  // Only a tool that may be retried starts a new attempt after an interruption.
  interrupted: ['started'],
  completed: [],
  failed: [],
};

/**
 * Asserts that every tool call of a run has its audit lifecycle in the contract order with no
 * repeated step: `proposed → policy_decided → (approval_requested → approval_resolved) → started →
 * completed | failed | interrupted`. A call id may be written bare (`c1`) or run-qualified.
 */
export function assertLifecycles(store: Store, runId: string): void {
  const byCall = new Map<string, string[]>();
  for (const e of store.audit.list({ runId })) {
    if (e.callId === null || e.callId === undefined || !(e.kind in NEXT)) continue;
    const id = e.callId.startsWith(`${runId}:`) ? e.callId.slice(runId.length + 1) : e.callId;
    const steps = byCall.get(id) ?? [];
    steps.push(e.kind);
    byCall.set(id, steps);
  }
  for (const [callId, steps] of byCall) {
    let prev = '';
    for (const step of steps) {
      expect(NEXT[prev], `run ${runId} call ${callId}: ${steps.join(' → ')}`).toContain(step);
      prev = step;
    }
  }
}
