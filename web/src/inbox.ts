// The Inbox: every pending approval, attended or parked, decided here.
import { approvalCard, fromRecord, markDecided } from './card.ts';
import { h, syncList } from './dom.ts';
import { refreshInbox, state } from './state.ts';

/** How long a card decided on this page stays in the list, in its decision's colour. */
const DECIDED_HERE_MS = 60_000;

export function inboxView(): { el: HTMLElement; update(): void } {
  const list = h('div', { class: 'cards', 'data-testid': 'inbox-list' });
  const empty = h('p', { class: 'empty' }, 'Nothing is waiting for you.');
  const error = h('p', { class: 'error' });
  const el = h('section', { class: 'view inbox' }, h('h2', null, 'Inbox'), error, empty, list);
  // Cards decided here stay a minute, showing what was decided (green, red), not vanishing at once.
  const decidedHere = new Map<string, { item: (typeof state.inbox)[number]; until: number }>();
  const update = () => {
    const now = Date.now();
    for (const [id, d] of decidedHere) if (d.until <= now) decidedHere.delete(id);
    const pending = state.inbox.filter((a) => a.status === 'pending');
    const shown = [
      ...pending,
      ...[...decidedHere.values()].map((d) => d.item).filter((a) => !pending.some((p) => p.id === a.id)),
    ];
    error.textContent = state.inboxError ?? '';
    empty.hidden = shown.length > 0 || state.inboxError !== null;
    syncList(
      list,
      shown,
      (a) => a.id,
      (a) =>
        approvalCard(fromRecord(a, state.requested.get(a.id), state.details.get(a.id)), () => {
          decidedHere.set(a.id, { item: a, until: Date.now() + DECIDED_HERE_MS });
          void refreshInbox();
        }),
    );
  };
  return { el, update };
}

/** Marks every card of an approval decided elsewhere (another surface, the CLI, expiry). */
export function markResolved(
  root: HTMLElement,
  approvalId: string,
  text: string,
  decision: 'approved' | 'denied' | 'expired',
): void {
  for (const card of root.querySelectorAll<HTMLElement>(`[data-approval="${CSS.escape(approvalId)}"]`))
    if (!card.classList.contains('decided')) markDecided(card, text, decision);
}
