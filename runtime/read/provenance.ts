import type { ApprovalRecord, AuditEvent, ChainVerification, Store } from '../../store/index.ts';

/** One link of a call's provenance chain, with the audit sequence number that records it. */
export interface ProvenanceStep {
  /**
   * `proposed`, `decided` (the policy and its rule), `approval_requested`, `approval_resolved`
   * (by whom, through which surface and node), `standing_approval` (the grant that allowed it),
   * `arguments` (the arguments run hash-equal to the approved ones: no seq of its own), `started`,
   * and the end: `completed`, `failed`, `interrupted`, `call_elsewhere` or `call_refused`.
   */
  readonly step: string;
  /** The audit event's seq (null only for the `arguments` check, which compares two events). */
  readonly seq: number | null;
  /** When it happened (ms since the epoch), or null for the `arguments` check. */
  readonly at: number | null;
  /** What this link says, in a short sentence (redacted text only). */
  readonly summary: string;
  /** The facts behind it (rule, hashes, who, surface, node, status). */
  readonly facts: Readonly<Record<string, unknown>>;
}

/**
 * Why a call ran (or did not): its chain from proposal to outcome, read from the audit log.
 * `closed` is true only when every link is present, in order, hash-equal where it must be, and
 * the log's hash chain verifies through the last of them; `problems` says what is wrong otherwise.
 */
export interface Provenance {
  readonly runId: string;
  readonly callId: string;
  readonly tool: string | null;
  readonly closed: boolean;
  readonly problems: readonly string[];
  readonly steps: readonly ProvenanceStep[];
  readonly chain:
    | { readonly ok: true; readonly headSeq: number | null }
    | { readonly ok: false; readonly brokenSeq: number; readonly reason: string };
}

/** What the chain of one call is built from (all read from one store). */
export interface ProvenanceSources {
  readonly runId: string;
  readonly callId: string;
  /** The call's audit events (those of its run with this call id), in seq order. */
  readonly events: readonly AuditEvent[];
  readonly approval: ApprovalRecord | null;
  /** The `standing_approval_granted` event of the grant that allowed the call, when one did. */
  readonly grant: AuditEvent | null;
  /**
   * The last `run_taken_over` event of the run in this log (a cluster node took it over from
   * another), or null. With it, the links recorded on the node it came from (proposed, decided,
   * approval requested) are read from the approval record this node brought in from the shared
   * Inbox instead of this log.
   */
  readonly takenOver?: AuditEvent | null;
  readonly verification: ChainVerification;
}

const END_KINDS = new Set(['completed', 'failed', 'interrupted', 'call_elsewhere']);

function detailOf(e: AuditEvent | undefined): Record<string, unknown> {
  const d = e?.detail;
  return typeof d === 'object' && d !== null && !Array.isArray(d) ? (d as Record<string, unknown>) : {};
}

/**
 * The links recorded on the node a run was taken over from, as the approval record brought in
 * from the shared Inbox states them (no seq in this log: `recordedOn` names that node's log).
 */
function adoptedLinks(
  approval: ApprovalRecord,
  takenOver: AuditEvent,
  withRequest: boolean,
): ProvenanceStep[] {
  const from = typeof detailOf(takenOver).from === 'string' ? (detailOf(takenOver).from as string) : null;
  const where = from === null ? 'another node' : `node ${from}`;
  const source = { recordedOn: from, source: 'the shared Inbox’s approval record' };
  const at = approval.createdAt;
  const links: ProvenanceStep[] = [
    {
      step: 'proposed',
      seq: null,
      at,
      summary: `the model proposed ${approval.tool} (recorded on ${where})`,
      facts: source,
    },
    {
      step: 'decided',
      seq: null,
      at,
      summary: `policy: approval-required by rule ${approval.ruleId} (recorded on ${where})`,
      facts: { decision: 'approval-required', rule: approval.ruleId, ...source },
    },
  ];
  if (withRequest)
    links.push({
      step: 'approval_requested',
      seq: null,
      at,
      summary: `approval ${approval.id} requested (recorded on ${where})`,
      facts: {
        approvalId: approval.id,
        argsHash: approval.argsHash ?? null,
        policyHash: approval.policyHash ?? null,
        expiresAt: approval.expiresAt,
        ...source,
      },
    });
  return links;
}

function step(
  name: string,
  e: AuditEvent,
  summary: string,
  facts: Record<string, unknown> = {},
): ProvenanceStep {
  return { step: name, seq: e.seq, at: e.at, summary, facts };
}

/**
 * Builds the provenance chain of one call (pure). A chain that does not close says why: a link
 * missing or out of order, arguments run that are not hash-equal to the approved ones (or a
 * standing approval used on another target), a refusal, or a hash chain broken at or before
 * the last link.
 */
export function buildProvenance(src: ProvenanceSources): Provenance {
  const problems: string[] = [];
  const steps: ProvenanceStep[] = [];
  const first = (kind: string) => src.events.find((e) => e.kind === kind);
  // Taken over from another node: its first links are in that node's log, not this one.
  const taken = src.takenOver ?? null;
  const proposed = first('proposed');
  const decided = first('policy_decided');
  const requested = first('approval_requested');
  // This log's `approval_requested`, when it has one, is the request as it was brought in.
  const adopted =
    taken !== null && src.approval !== null && proposed === undefined && decided === undefined
      ? adoptedLinks(src.approval, taken, requested === undefined)
      : null;
  const resolved = first('approval_resolved');
  const started = first('started');
  const refused = first('call_refused');
  const end = src.events.find((e) => END_KINDS.has(e.kind));

  if (adopted !== null) steps.push(...adopted);
  else if (proposed)
    steps.push(step('proposed', proposed, `the model proposed ${proposed.tool ?? 'a call'}`));
  else problems.push('no `proposed` event: the call was never recorded as proposed');
  const decision = adopted !== null ? 'approval-required' : (decided?.status ?? null);
  if (adopted !== null) {
    // Its links are above.
  } else if (decided) {
    const d = detailOf(decided);
    steps.push(
      step('decided', decided, `policy: ${decision ?? '?'} by rule ${decided.ruleId ?? '?'}`, {
        decision,
        rule: decided.ruleId,
        ruleSource: d.ruleSource ?? null,
        reason: d.reason ?? null,
      }),
    );
  } else problems.push('no `policy_decided` event: nothing records the policy decision');

  if (decision === 'approval-required') {
    if (requested) {
      const d = detailOf(requested);
      steps.push(
        step('approval_requested', requested, `approval ${String(d.approvalId ?? '?')} requested`, {
          approvalId: d.approvalId ?? null,
          argsHash: d.argsHash ?? null,
          policyHash: d.policyHash ?? null,
          expiresAt: d.expiresAt ?? null,
        }),
      );
    } else if (adopted === null)
      problems.push('the call needed an approval and no `approval_requested` event records one');
    if (resolved) {
      const d = detailOf(resolved);
      const node = (d.through as string | undefined) ?? src.approval?.decidedNode ?? null;
      const surface = (d.decidedSurface as string | undefined) ?? src.approval?.decidedSurface ?? null;
      const who = (d.decidedBy as string | undefined) ?? null;
      const summary =
        resolved.status === 'approved' || resolved.status === 'denied'
          ? `${resolved.status} by ${who ?? 'unknown'} through ${surface ?? 'an unrecorded surface'}${node === null ? '' : ` on node ${node}`}`
          : `${resolved.status ?? 'resolved'}${d.withdrawn === undefined ? '' : ` (withdrawn: ${String(d.withdrawn)})`}`;
      steps.push(
        step('approval_resolved', resolved, summary, {
          decision: resolved.status,
          decidedBy: who,
          surface,
          node,
          reason: d.decisionReason ?? null,
        }),
      );
    } else if (requested || adopted !== null)
      problems.push('the approval was requested and nothing records its decision');
  }

  if (decided?.ruleId != null && detailOf(decided).ruleSource === 'standing-approval') {
    if (src.grant) {
      const d = detailOf(src.grant);
      steps.push(
        step(
          'standing_approval',
          src.grant,
          `standing approval ${src.grant.standingApprovalId ?? '?'} for ${src.grant.resource ?? '?'}, granted by ${String(d.grantedBy ?? 'unknown')}`,
          {
            standingApprovalId: src.grant.standingApprovalId,
            target: src.grant.resource,
            grantedBy: d.grantedBy,
          },
        ),
      );
      if (started && decided.resource !== src.grant.resource)
        problems.push(
          `the standing approval binds ${src.grant.resource ?? '?'} and the call's target was ${decided.resource ?? '?'}`,
        );
    } else problems.push(`no \`standing_approval_granted\` event for ${decided.ruleId}`);
  }

  if (started) {
    const ran = (detailOf(started).argsHash as string | undefined) ?? null;
    const approved = (detailOf(requested).argsHash as string | undefined) ?? src.approval?.argsHash ?? null;
    if (decision === 'approval-required') {
      if (resolved?.status !== 'approved') problems.push('the call started without an approved approval');
      const equal = ran !== null && approved !== null && ran === approved;
      steps.push({
        step: 'arguments',
        seq: null,
        at: null,
        summary: equal
          ? 'the arguments run are hash-equal to the ones approved'
          : 'the arguments run are NOT shown hash-equal to the ones approved',
        facts: { approvedHash: approved, ranHash: ran, equal },
      });
      if (!equal) problems.push('the arguments run are not shown hash-equal to the ones approved');
    }
    steps.push(
      step('started', started, 'started', { argsHash: ran, attempt: detailOf(started).attempt ?? 1 }),
    );
  }
  if (refused) {
    const d = detailOf(refused);
    steps.push(
      step('call_refused', refused, `refused: ${refused.status ?? 'approval_args_mismatch'}`, {
        ...d,
        reason: refused.status,
      }),
    );
    problems.push(`the call was refused before it ran (${refused.status ?? 'approval_args_mismatch'})`);
  }
  if (end) {
    steps.push(step(end.kind, end, end.kind, { status: end.status }));
  }
  if (adopted !== null && taken !== null) {
    const d = detailOf(taken);
    const link = step('taken_over', taken, `this node took the run over from node ${String(d.from ?? '?')}`, {
      from: d.from ?? null,
      why: d.why ?? null,
    });
    // Everything this log holds of the call comes after the take-over that brought it here.
    if (src.events.some((e) => e.seq < taken.seq))
      problems.push(
        `the run was taken over at event #${taken.seq}, after this log's first event of the call`,
      );
    // In seq order among this log's links, after the ones recorded on the other node.
    const at = steps.findIndex((s, i) => i >= adopted.length && s.seq !== null && s.seq > taken.seq);
    steps.splice(at === -1 ? steps.length : at, 0, link);
  }
  const runs = decision === 'allow' || (decision === 'approval-required' && resolved?.status === 'approved');
  if (runs && !refused) {
    if (!started && end?.kind !== 'call_elsewhere')
      problems.push('the call was allowed and no `started` event records it');
    if (started && !end) problems.push('the call started and nothing records how it ended');
  }

  const seqs = steps.map((s) => s.seq).filter((s): s is number => s !== null && s !== src.grant?.seq);
  for (let i = 1; i < seqs.length; i++)
    if ((seqs[i] as number) <= (seqs[i - 1] as number)) problems.push('the events are out of order');
  const last = Math.max(0, ...steps.map((s) => s.seq ?? 0));
  const v = src.verification;
  const chain = v.ok
    ? ({ ok: true, headSeq: v.headSeq } as const)
    : ({ ok: false, brokenSeq: v.brokenSeq, reason: v.reason } as const);
  if (!v.ok && v.brokenSeq <= last)
    problems.push(`the audit hash chain does not verify at event #${v.brokenSeq} (${v.reason})`);
  return {
    runId: src.runId,
    callId: src.callId,
    tool: proposed?.tool ?? decided?.tool ?? (adopted === null ? null : (src.approval?.tool ?? null)),
    closed: problems.length === 0,
    problems: [...new Set(problems)],
    steps,
    chain,
  };
}

/**
 * The provenance of call `callId` of run `runId` in `store`, or null when the log has no event
 * of that call. Walks the whole hash chain (a call's events verify only as part of it).
 */
export function provenanceOf(store: Store, runId: string, callId: string): Provenance | null {
  const all = store.audit.list({ runId });
  const events = all.filter((e) => e.callId === callId);
  if (events.length === 0) return null;
  const takenOver = all.filter((e) => e.kind === 'run_taken_over').at(-1) ?? null;
  const decided = events.find((e) => e.kind === 'policy_decided');
  const grantId = detailOf(decided).ruleSource === 'standing-approval' ? decided?.ruleId : null;
  let grant: AuditEvent | null = null;
  if (grantId != null) {
    for (const e of store.audit.iterate({}))
      if (e.kind === 'standing_approval_granted' && e.standingApprovalId === grantId) {
        grant = e;
        break;
      }
  }
  return buildProvenance({
    runId,
    callId,
    events,
    approval: store.approvals.getByCall(`${runId}:${callId}`),
    grant,
    takenOver,
    verification: store.audit.verifyChain(),
  });
}
