// The Inbox: every pending approval, attended or parked, decided here.
import { approvalCard, fromRecord, markDecided } from './card.ts';
import { h, syncList } from './dom.ts';
import { refreshInbox, state } from './state.ts';

export function inboxView(): { el: HTMLElement; update(): void } {
  const list = h('div', { class: 'cards', 'data-testid': 'inbox-list' });
  const empty = h('p', { class: 'empty' }, 'Nothing is waiting for you.');
  const error = h('p', { class: 'error' });
  const el = h('section', { class: 'view inbox' }, h('h2', null, 'Inbox'), error, empty, list);
  const update = () => {
    error.textContent = state.inboxError ?? '';
    empty.hidden = state.inbox.length > 0 || state.inboxError !== null;
    const pending = state.inbox.filter((a) => a.status === 'pending');
    syncList(
      list,
      pending,
      (a) => a.id,
      (a) =>
        approvalCard(
          fromRecord(a, state.requested.get(a.id), state.details.get(a.id)),
          () => void refreshInbox(),
        ),
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
