import type { Logger } from 'pino';
import type { RunFeedEvent } from './events.ts';

/**
 * The daemon's info-level lifecycle lines, from the run feed: run started / parked / completed /
 * failed, approval requested / resolved, call denied. Ids, tools, reason codes and rule ids only:
 * never arguments, contents, texts or previews (the feed is redacted; the log keeps less still).
 */
export function logRunEvent(logger: Logger, e: RunFeedEvent): void {
  const ids = {
    runId: e.runId,
    agentId: e.agentId,
    ...(e.parentRunId === null ? {} : { parentRunId: e.parentRunId }),
  };
  switch (e.type) {
    case 'run.started':
      logger.info(
        { ...ids, surface: e.surface, interaction: e.interaction, taskId: e.taskId },
        'run started',
      );
      return;
    case 'approval.requested':
      logger.info(
        {
          ...ids,
          approvalId: e.approvalId,
          callId: e.callId,
          tool: e.tool,
          risk: e.risk,
          reason: e.reason,
          rule: e.rule.id,
        },
        'approval requested',
      );
      return;
    case 'approval.resolved':
      logger.info({ ...ids, approvalId: e.approvalId, decision: e.decision, by: e.by }, 'approval decided');
      return;
    case 'run.parked':
      logger.info({ ...ids, approvalId: e.approvalId }, 'run parked');
      return;
    case 'tool.denied':
      logger.info({ ...ids, callId: e.callId, tool: e.tool, reason: e.reason }, 'call denied');
      return;
    case 'run.completed':
      logger.info({ ...ids, reason: e.reason }, 'run completed');
      return;
    case 'run.failed':
      // The failure message is redacted at its source and says what to check.
      logger.warn(
        { ...ids, outcome: e.outcome, reason: e.reason, message: e.message },
        `run ${e.outcome === 'denied' ? 'denied' : 'failed'}`,
      );
      return;
    case 'model.text':
    case 'tool.proposed':
    case 'tool.decided':
    case 'tool.completed':
      return; // Per-step detail: the audit log and `snotra run --json` have it.
  }
}
