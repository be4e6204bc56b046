import type { ApprovalRecord } from '../../store/index.ts';
import { subject, type Bus, type TraceContextValues } from '../bus/index.ts';
import type { RuntimeKinds } from '../messages.ts';

/**
 * Publishes `approval.resolved` (`snotra.v1.approval.<id>.resolved`) for a decided, expired or
 * withdrawn approval, with the run's trace context in its headers when there is one. On one
 * node its approval service calls it; in cluster mode the node whose write to the shared Inbox
 * resolved the approval does (runtime/cluster), so it goes out once whichever nodes still run.
 */
export function publishResolved(
  bus: Bus<RuntimeKinds>,
  approval: ApprovalRecord,
  trace: TraceContextValues | null,
): void {
  if (approval.status === 'pending') return;
  bus.publish(
    subject('approval', approval.id, 'resolved'),
    'approval.resolved',
    { approvalId: approval.id, runId: approval.runId, status: approval.status },
    { trace },
  );
}
