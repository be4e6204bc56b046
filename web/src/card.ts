// The approval card, in the Inbox and inline in chat: what the call is, why it needs a human,
// the diff or command, and the decision controls.
import { ApiError, decide } from './api.ts';
import { whyOf } from './conversation.ts';
import { h, pretty } from './dom.ts';
import { expiryText } from './when.ts';
import type { ApprovalDetails, ApprovalRecord, ApprovalRequested, Preview } from './wire.ts';

export interface CardData {
  readonly id: string;
  readonly tool: string;
  readonly risk: string;
  readonly agentId: string;
  readonly reason: string;
  readonly ruleId: string;
  readonly targets: readonly string[];
  readonly args: unknown;
  readonly preview: Preview | null;
  /** What scopes are offered; null when not known (the server refuses an ineligible one). */
  readonly options: { readonly session: boolean; readonly standing: boolean } | null;
  readonly expiresAt: number;
  readonly where: string;
  /** Cluster mode: the node that parked it; null on a single runtime. */
  readonly node: string | null;
}

export function fromRequested(e: ApprovalRequested): CardData {
  return {
    id: e.approvalId,
    tool: e.tool,
    risk: e.risk,
    agentId: e.agentId,
    reason: e.reason,
    ruleId: e.rule.id,
    targets: e.targets.map((t) => t.resolved ?? t.input),
    args: e.args,
    preview: e.preview,
    options: e.options,
    expiresAt: e.expiresAt,
    where: e.interaction,
    node: null,
  };
}

export function fromRecord(
  a: ApprovalRecord,
  live: ApprovalRequested | undefined,
  details: ApprovalDetails | null | undefined,
): CardData {
  const node = a.node ?? null;
  if (live !== undefined) return { ...fromRequested(live), where: a.surface ?? live.interaction, node };
  return {
    id: a.id,
    tool: a.tool,
    risk: a.risk,
    agentId: a.agentId,
    reason: a.reason,
    ruleId: details?.rule.id ?? a.ruleId,
    targets:
      details != null
        ? details.targets.map((t) => t.resolved ?? t.input)
        : a.target === null
          ? []
          : [a.target],
    args: a.args,
    preview: details?.preview ?? null,
    options: details?.options ?? null,
    expiresAt: a.expiresAt,
    where: a.surface ?? 'unknown',
    node,
  };
}

function previewOf(p: Preview | null): HTMLElement | null {
  if (p === null) return null;
  if (p.kind === 'command')
    return h(
      'div',
      { class: 'preview' },
      h('div', { class: 'label' }, 'command', p.cwd === null ? '' : ` in ${p.cwd}`),
      h('pre', { class: 'command' }, p.command),
    );
  if (p.diff === null)
    return h(
      'div',
      { class: 'preview' },
      h('div', { class: 'label' }, `diff of ${p.path}`),
      h('p', { class: 'note' }, p.note ?? 'no diff'),
    );
  const lines = p.diff.split('\n').map((line) => {
    const cls = line.startsWith('@@')
      ? 'hunk'
      : line.startsWith('+')
        ? 'add'
        : line.startsWith('-')
          ? 'del'
          : 'ctx';
    return h('span', { class: `line ${cls}` }, line, '\n');
  });
  return h(
    'div',
    { class: 'preview' },
    h('div', { class: 'label' }, `diff of ${p.path}`, p.truncated ? ' (truncated)' : ''),
    h('pre', { class: 'diff', 'data-testid': 'diff' }, lines),
  );
}

/** A card whose buttons decide the approval; `decided(el, text)` marks it done from outside (a live event). */
export function approvalCard(d: CardData, onDecided: () => void): HTMLElement {
  const scope = h(
    'select',
    { class: 'scope', 'aria-label': 'scope', 'data-testid': 'scope' },
    h('option', { value: 'once' }, 'once'),
    h('option', { value: 'session', disabled: d.options?.session === false }, 'for this session'),
    h('option', { value: 'always', disabled: d.options?.standing === false }, 'always (this exact target)'),
  );
  const reason = h('input', {
    class: 'reason',
    type: 'text',
    placeholder: 'reason (optional; a denial’s reason reaches the model)',
    maxlength: 1000,
    'aria-label': 'reason',
  });
  const status = h('div', { class: 'status', role: 'status' });
  const approve = h(
    'button',
    { class: 'approve', type: 'button', 'aria-label': `Approve ${d.tool}` },
    'Approve',
  );
  const deny = h('button', { class: 'deny', type: 'button', 'aria-label': `Deny ${d.tool}` }, 'Deny');
  const controls = h('div', { class: 'controls' }, scope, reason, approve, deny);
  const send = async (kind: 'approve' | 'deny') => {
    approve.disabled = deny.disabled = true;
    status.textContent = 'sending…';
    const why = reason.value.trim();
    try {
      await decide(
        d.id,
        kind === 'approve'
          ? {
              decision: 'approve',
              scope: scope.value as 'once' | 'session' | 'always',
              ...(why === '' ? {} : { reason: why }),
            }
          : { decision: 'deny', ...(why === '' ? {} : { reason: why }) },
      );
      markDecided(
        card,
        kind === 'approve' ? `approved (${scope.value}) by you` : 'denied by you',
        kind === 'approve' ? 'approved' : 'denied',
      );
      onDecided();
    } catch (err) {
      approve.disabled = deny.disabled = false;
      status.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
      status.className = 'status error';
    }
  };
  approve.addEventListener('click', () => void send('approve'));
  deny.addEventListener('click', () => void send('deny'));
  const card = h(
    'article',
    {
      class: `card risk-${d.risk}`,
      'data-approval': d.id,
      'data-testid': 'approval-card',
      role: 'region',
      'aria-label': `Approval for ${d.tool} by ${d.agentId}`,
    },
    h(
      'header',
      null,
      h('span', { class: 'tool' }, d.tool),
      h('span', { class: `risk` }, d.risk),
      h('span', { class: 'agent' }, d.agentId),
    ),
    h(
      'dl',
      null,
      h('dt', null, 'reason'),
      h('dd', null, whyOf(d.reason, d.risk, d.ruleId)),
      h('dt', null, 'targets'),
      h('dd', { class: 'targets' }, d.targets.length === 0 ? '—' : d.targets.map((t) => h('code', null, t))),
      h('dt', null, 'where'),
      h('dd', null, d.where),
      // Cluster mode: the node that parked it (a decision works through any node).
      ...(d.node === null ? [] : [h('dt', null, 'node'), h('dd', { class: 'node' }, d.node)]),
      h('dt', null, 'expires'),
      h('dd', { class: 'expires', 'data-expires': d.expiresAt }, expiryText(d.expiresAt)),
    ),
    previewOf(d.preview),
    h('details', null, h('summary', null, 'arguments'), h('pre', { class: 'args' }, pretty(d.args))),
    controls,
    status,
  );
  return card;
}

/** Marks a card decided: controls gone, the outcome shown in its decision's colour. */
export function markDecided(
  card: HTMLElement,
  text: string,
  decision: 'approved' | 'denied' | 'expired',
): void {
  card.classList.add('decided', `decision-${decision}`);
  card.querySelector('.controls')?.remove();
  const status = card.querySelector('.status');
  if (status !== null) {
    status.textContent = text;
    status.className = `status done decision-${decision}`;
  }
}

/** Keeps the expiry of every card under `root` current (its time left), once every 15 s. */
export function keepExpiriesCurrent(root: HTMLElement): void {
  setInterval(() => {
    for (const el of root.querySelectorAll<HTMLElement>('[data-expires]'))
      el.textContent = expiryText(Number(el.dataset.expires));
  }, 15_000);
}
