import type { Decision } from '../../policy/decision.ts';
import type { AuditFields } from './types.ts';

/** The audit fields a policy Decision contributes to `policy_decided` (and later) events. */
export interface DecisionAuditFields extends Pick<AuditFields, 'risk' | 'ruleId' | 'resource' | 'status'> {
  /** The rest of the Decision, for the event's `detail`. */
  readonly detail: {
    readonly reason: Decision['reason'];
    readonly ruleSource: Decision['rule']['source'];
    readonly step: number;
    readonly humanRequired: boolean;
    readonly targets: Decision['targets'];
  };
}

/**
 * Maps a Decision to audit fields: its risk, the matched rule id, the resolved resource and the
 * decision kind as status; reason, rule source, step and every target go into the detail.
 * The resource is the first target's resolved value (or its input when unresolved); with
 * several targets it is a JSON array of them, with none it is null.
 */
export function auditFieldsFromDecision(decision: Decision): DecisionAuditFields {
  const resources = decision.targets.map((target) => target.resolved ?? target.input);
  const resource =
    resources.length === 0 ? null : resources.length === 1 ? resources[0] : JSON.stringify(resources);
  return {
    risk: decision.risk,
    ruleId: decision.rule.id,
    resource: resource ?? null,
    status: decision.decision,
    detail: {
      reason: decision.reason,
      ruleSource: decision.rule.source,
      step: decision.step,
      humanRequired: decision.humanRequired,
      targets: decision.targets,
    },
  };
}
