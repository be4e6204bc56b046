import type { RunContext } from '../../machines/run/types.ts';
import type { Decision } from '../../policy/decision.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { Redactor } from '../../store/index.ts';
import { grantOptions } from './grant-options.ts';
import { approvalPreview, type ApprovalPreview } from './preview.ts';

/**
 * What a human is shown beside an approval request: the policy's targets and rule, the scopes
 * a grant may take, and the preview (the exact command, or the diff against the file as it is
 * now). Redacted. The live feed's `approval.requested` and the sidecar's approval route both
 * show these, built here.
 */
export interface ApprovalDetails {
  readonly targets: Decision['targets'];
  readonly rule: Decision['rule'];
  readonly options: { readonly session: boolean; readonly standing: boolean };
  readonly preview: ApprovalPreview | null;
}

/** What approval details are built from besides the run. */
export interface ApprovalDetailsDeps {
  readonly registry: ToolRegistry;
  readonly redactor: Redactor;
  /** The primary root now (after any `setRoots`): where a shell command without `cwd` runs. */
  readonly primaryRoot: () => string | null;
}

/**
 * The details of the call at the run's cursor as its decision stands, or null when the run
 * holds no such call or no decision for it.
 */
export function approvalDetails(
  deps: ApprovalDetailsDeps,
  run: Pick<RunContext, 'calls' | 'cursor' | 'decision' | 'taskId'>,
): ApprovalDetails | null {
  const call = run.calls[run.cursor];
  const decision = run.decision;
  if (call === undefined || decision === null) return null;
  const options = grantOptions(deps.registry, call.tool, call.args, decision, run.taskId);
  return {
    targets: deps.redactor.redact(decision.targets) as Decision['targets'],
    rule: decision.rule,
    options: { session: options.session !== null, standing: options.standing !== null },
    preview: approvalPreview(call.tool, call.args, decision.targets, deps.primaryRoot(), (t) =>
      deps.redactor.redactString(t),
    ),
  };
}
