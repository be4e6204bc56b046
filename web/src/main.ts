// The Snotra web app: Inbox, Chat, Runs, Goals and Actors over the sidecar of this page's own origin.
import { actorsView } from './actors.ts';
import { keepExpiriesCurrent } from './card.ts';
import { chatView } from './chat.ts';
import { h } from './dom.ts';
import { connectEvents } from './events.ts';
import { goalsView } from './goals.ts';
import { inboxView, markResolved } from './inbox.ts';
import { notifier } from './notify.ts';
import { runsView } from './runs.ts';
import {
  applyFrame,
  onChange,
  refreshAgents,
  refreshInbox,
  refreshRuns,
  refreshSessions,
  setFeed,
  state,
} from './state.ts';
import { tabList } from './tabs.ts';

type Tab = 'inbox' | 'chat' | 'runs' | 'goals' | 'actors';
const TABS = ['inbox', 'chat', 'runs', 'goals', 'actors'] as const;

const inbox = inboxView();
const chat = chatView();
const runs = runsView();
const goals = goalsView();
const actors = actorsView();
const views: Record<Tab, HTMLElement> = {
  inbox: inbox.el,
  chat: chat.el,
  runs: runs.el,
  goals: goals.el,
  actors: actors.el,
};

const badge = h('span', { class: 'count', 'data-testid': 'inbox-badge' }, '0');
const feed = h('span', { class: 'feed', 'data-testid': 'feed', role: 'status' }, 'connecting');
const banner = h(
  'p',
  { class: 'banner', hidden: true },
  'This page has no access to the runtime. Open it with `snotra app`, or with `snotra open` beside a running `snotra start`.',
);
const tabs = tabList<Tab>(
  'Views',
  TABS.map((t) => ({
    id: t,
    panel: views[t],
    label:
      t === 'inbox'
        ? ['Inbox ', badge, h('span', { class: 'sr-only' }, ' approvals waiting')]
        : t[0]!.toUpperCase() + t.slice(1),
  })),
  (t) => {
    if (t === 'actors') actors.refresh();
    if (t === 'goals') goals.refresh();
  },
);
const notify = notifier(() => tabs.select('inbox'));
const main = h('main', null, Object.values(views));

document
  .getElementById('app')!
  .replaceChildren(
    h(
      'header',
      null,
      h(
        'nav',
        { 'aria-label': 'Snotra' },
        h('span', { class: 'brand' }, 'Snotra'),
        tabs.el,
        notify.button,
        feed,
      ),
    ),
    banner,
    main,
  );

onChange((what, event) => {
  if (what === 'inbox') {
    const n = state.inbox.filter((a) => a.status === 'pending').length;
    badge.textContent = String(n);
    badge.classList.toggle('some', n > 0);
    notify.waiting(n);
    inbox.update();
  } else if (what === 'runs') runs.update();
  else if (what === 'agents') chat.update();
  else if (what === 'sessions') chat.sessionsChanged();
  else if (what === 'actors') {
    if (!actors.el.hidden) actors.refresh();
  } else if (what === 'goals') {
    if (!goals.el.hidden) goals.refresh();
  } else if (what === 'feed') {
    feed.textContent = state.feed;
    feed.className = `feed ${state.feed}`;
    banner.hidden = state.feed !== 'unauthorized';
    // Back after a gap: goal changes made meanwhile are read again.
    if (event === undefined && state.feed === 'live' && !goals.el.hidden) goals.refresh();
    if (event !== undefined) {
      chat.onEvent(event);
      runs.runChanged(event);
      if (event.type === 'approval.requested') notify.requested(event);
      if (event.type === 'approval.resolved')
        markResolved(
          main,
          event.approvalId,
          `${event.decision} by ${event.by?.replace(/^sidecar:/, '') ?? 'the runtime'}`,
          event.decision,
        );
      if (!actors.el.hidden && event.type.startsWith('run.')) actors.refresh();
    }
  }
});

tabs.select('chat');
keepExpiriesCurrent(main);
connectEvents(applyFrame, setFeed);
void refreshAgents();
void refreshInbox();
void refreshRuns();
void refreshSessions();
