// Telling a person in another tab that an approval waits: the title's badge count always, and a
// system notification while this tab is hidden (permission asked once, from a click).
import { reasonText } from '../../policy/reason-text.ts';
import { h } from './dom.ts';
import type { ApprovalRequested } from './wire.ts';

const TITLE = 'Snotra';

/** The title with the number of approvals waiting: `(2) Snotra`. */
export function titleFor(waiting: number): string {
  return waiting > 0 ? `(${waiting}) ${TITLE}` : TITLE;
}

export function notifier(onOpen: () => void): {
  button: HTMLElement;
  waiting(n: number): void;
  requested(e: ApprovalRequested): void;
} {
  const supported = typeof Notification !== 'undefined';
  const button = h(
    'button',
    {
      type: 'button',
      class: 'notify-toggle',
      'data-testid': 'notify-toggle',
      hidden: !supported || Notification.permission !== 'default',
    },
    'Notify me',
  );
  button.addEventListener('click', () => {
    void Notification.requestPermission().finally(() => (button.hidden = true));
  });
  return {
    button,
    waiting(n) {
      document.title = titleFor(n);
    },
    requested(e) {
      if (!supported || document.visibilityState !== 'hidden' || Notification.permission !== 'granted')
        return;
      const n = new Notification(`Approval waiting: ${e.tool}`, {
        body: `${e.agentId}: ${reasonText(e.reason, e.risk)}`,
        tag: e.approvalId,
      });
      n.addEventListener('click', () => {
        window.focus();
        onOpen();
        n.close();
      });
    },
  };
}
