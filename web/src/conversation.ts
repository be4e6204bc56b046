// A run as a conversation (GET /v1/runs/:id/conversation): the user's messages, the model's
// turns, each call in place with its decision, approval and result, and each sub-agent's run
// nested at the call that started it.
import { reasonText } from '../../policy/reason-text.ts';
import { ApiError, getJson, paths } from './api.ts';
import { h, pretty } from './dom.ts';
import { rewindOf } from './rewind.ts';
import type { ConversationCall, Provenance, RunConversation } from './wire.ts';

/** The outcome of an approval as a chip coloured by its decision (approved green, denied red, expired grey). */
export function decisionChip(status: string, by: string | null): HTMLElement {
  const words =
    status === 'pending'
      ? 'waiting for you'
      : by === null
        ? status
        : `${status} by ${by.replace(/^sidecar:/, '')}`;
  return h('span', { class: `chip decision-${status}`, 'data-testid': 'decision' }, words);
}

/** Why the policy decided as it did: its sentence first, the rule id and code in small print. */
export function whyOf(reason: string | null, risk: string | null, ruleId: string | null): HTMLElement | null {
  if (reason === null) return null;
  return h(
    'span',
    { class: 'why' },
    reasonText(reason, risk),
    h('small', { class: 'rule' }, ` rule ${ruleId ?? '—'} · ${reason}`),
  );
}

function resultOf(c: ConversationCall): HTMLElement | null {
  const r = c.result;
  if (r === null) return null;
  if (r.kind === 'tool.result')
    return h(
      'details',
      { class: 'result ok' },
      h('summary', null, 'result'),
      h('pre', null, pretty(r.content)),
    );
  if (r.kind === 'tool.denied')
    return h('p', { class: 'result denied' }, 'Not run: ', whyOf(r.reason, null, null) ?? r.message);
  return h(
    'p',
    { class: 'result failed' },
    `${r.kind === 'tool.failed' ? 'Failed' : 'Interrupted'}: ${r.message}`,
  );
}

/**
 * The call's provenance (as `snotra audit why` prints it), read when the person opens it: each
 * link with its audit seq, and whether the chain closes (what is wrong when it does not).
 */
function provenanceOf(runId: string, callId: string): HTMLElement {
  const body = h('div', { class: 'provenance-body' }, 'reading the audit…');
  const box = h(
    'details',
    { class: 'provenance', 'data-testid': 'provenance' },
    h('summary', null, 'provenance'),
    body,
  ) as HTMLDetailsElement;
  let asked = false;
  box.addEventListener('toggle', () => {
    if (!box.open || asked) return;
    asked = true;
    getJson<Provenance>(paths.provenance(runId, callId)).then(
      (p) =>
        body.replaceChildren(
          h(
            'p',
            { class: `chain ${p.closed ? 'closed' : 'open'}`, 'data-testid': 'chain' },
            p.closed ? 'The chain closes: what ran is what was decided.' : 'The chain does not close.',
          ),
          p.problems.length === 0
            ? ''
            : h(
                'ul',
                { class: 'problems' },
                p.problems.map((x) => h('li', null, x)),
              ),
          h(
            'ol',
            { class: 'steps' },
            p.steps.map((st) =>
              h(
                'li',
                { 'data-step': st.step },
                h('code', null, st.seq === null ? '—' : `#${st.seq}`),
                ` ${st.step}: ${st.summary}`,
              ),
            ),
          ),
        ),
      (err: unknown) => {
        asked = false;
        body.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
      },
    );
  });
  return box;
}

function callOf(runId: string, c: ConversationCall): HTMLElement {
  const d = c.decision;
  return h(
    'div',
    { class: 'call', 'data-call': c.id },
    h(
      'div',
      { class: 'call-head' },
      h('code', { class: 'tool' }, c.tool),
      d === null ? null : h('span', { class: `chip policy-${d.decision}` }, d.decision),
      c.approval === null ? null : decisionChip(c.approval.status, c.approval.by),
    ),
    d === null ? null : whyOf(d.reason, d.risk, d.ruleId),
    h('details', null, h('summary', null, 'arguments'), h('pre', { class: 'args' }, pretty(c.args))),
    resultOf(c),
    provenanceOf(runId, c.id),
    rewindOf(runId, c.id),
    c.child === null ? null : conversationView(c.child, true),
  );
}

/** The conversation's elements; `nested` for a sub-agent's run inside its parent's call. */
export function conversationView(c: RunConversation, nested = false): HTMLElement {
  return h(
    'section',
    {
      class: `conversation${nested ? ' sub' : ''}`,
      'data-testid': nested ? 'sub-conversation' : 'conversation',
      'data-run': c.runId,
      'aria-label': nested ? `sub-agent ${c.agentId}` : 'conversation',
    },
    nested ? h('div', { class: 'label' }, `sub-agent ${c.agentId}`) : null,
    c.items.map((item) =>
      item.kind === 'user'
        ? h('div', { class: 'msg user' }, item.text)
        : h(
            'div',
            { class: 'turn' },
            item.text === null || item.text.trim() === ''
              ? null
              : h('div', { class: 'msg agent', 'data-testid': 'answer' }, item.text),
            item.calls.map((call) => callOf(c.runId, call)),
          ),
    ),
    c.outcome === null
      ? null
      : h(
          'div',
          { class: `status-line ${c.outcome.status === 'completed' ? 'done' : 'error'}` },
          c.outcome.status === 'completed'
            ? 'run completed'
            : `run ${c.outcome.status}: ${c.outcome.message ?? c.outcome.reason}`,
        ),
  );
}
