import type { Logger } from 'pino';
import type { RunInput } from '../machines/run/types.ts';
import type { RunFeedEvent } from './events.ts';
import type { SandboxStatus } from './sandbox/index.ts';

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
    case 'model.delta':
    case 'model.usage':
    case 'tool.proposed':
    case 'tool.decided':
    case 'tool.completed':
      return; // Per-step detail: the audit log and `snotra run --json` have it.
  }
}

/** A persisted run brought back from its snapshot (after a restart, or to take a decision): ids only. */
export function logRunResumed(logger: Logger, input: RunInput): void {
  logger.info(
    {
      runId: input.runId,
      agentId: input.agentId,
      ...(input.parentRunId === null ? {} : { parentRunId: input.parentRunId }),
    },
    'run resumed',
  );
}

/** The OS sandbox shell and git children run in, once at boot; without one, why (allow-mode shell then asks). */
export function logSandbox(logger: Logger, sandbox: SandboxStatus): void {
  if (sandbox.name === 'none')
    logger.warn(
      { sandbox: 'none', reason: sandbox.reason },
      'sandbox: none, allow-mode shell calls ask a human',
    );
  else logger.info({ sandbox: sandbox.name, program: sandbox.program }, `sandbox: ${sandbox.name}`);
}
