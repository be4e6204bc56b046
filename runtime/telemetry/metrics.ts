import type { Counter, Histogram, Meter } from '@opentelemetry/api';

/** The runtime's instruments (docs/telemetry.md lists them). */
export interface TelemetryMetrics {
  readonly runsStarted: Counter;
  readonly runsEnded: Counter;
  readonly decisions: Counter;
  readonly approvalWait: Histogram;
  readonly toolDuration: Histogram;
  readonly tokens: Histogram;
}

/**
 * Creates the instruments on `meter`; `pendingApprovals` is read at each export for the
 * `snotra.approvals.waiting` gauge (the Inbox is the truth: a count kept in memory would be
 * wrong after a restart).
 */
export function createMetrics(meter: Meter, pendingApprovals: () => number): TelemetryMetrics {
  meter
    .createObservableGauge('snotra.approvals.waiting', {
      description: 'Approvals (and budget requests) waiting for a human',
      unit: '{approval}',
    })
    .addCallback((result) => result.observe(pendingApprovals()));
  return {
    runsStarted: meter.createCounter('snotra.runs.started', { description: 'Runs started', unit: '{run}' }),
    runsEnded: meter.createCounter('snotra.runs.ended', {
      description: 'Runs ended, by outcome and reason',
      unit: '{run}',
    }),
    decisions: meter.createCounter('snotra.policy.decisions', {
      description: 'Policy decisions, by decision and reason',
      unit: '{decision}',
    }),
    approvalWait: meter.createHistogram('snotra.approval.wait', {
      description: 'From an approval request to its decision or expiry',
      unit: 's',
    }),
    toolDuration: meter.createHistogram('snotra.tool.duration', {
      description: 'From a tool call proposed (or approved) to its result',
      unit: 's',
    }),
    tokens: meter.createHistogram('gen_ai.client.token.usage', {
      description: 'Tokens per model call, by gen_ai.token.type',
      unit: '{token}',
    }),
  };
}
