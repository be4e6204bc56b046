// The Snotra web app: Inbox, Chat, Runs, Goals and Actors over the sidecar of this page's own origin.
import { actorsView } from './actors.ts';
import { chatView } from './chat.ts';
import { h } from './dom.ts';
import { connectEvents } from './events.ts';
import { goalsView } from './goals.ts';
import { inboxView, markResolved } from './inbox.ts';
import { runsView } from './runs.ts';
import { applyFrame, onChange, refreshAgents, refreshInbox, refreshRuns, setFeed, state } from './state.ts';

type Tab = 'inbox' | 'chat' | 'runs' | 'goals' | 'actors';

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

const badge = h(
  'span',
  { class: 'count', 'data-testid': 'inbox-badge', 'aria-label': 'pending approvals' },
  '0',
);
const feed = h('span', { class: 'feed', 'data-testid': 'feed' }, 'connecting');
const banner = h(
  'p',
  { class: 'banner', hidden: true },
  'This page has no access to the runtime. Open it with `snotra app`, or with `snotra open` beside a running `snotra start`.',
);
const tabs = (['inbox', 'chat', 'runs', 'goals', 'actors'] as const).map((t) =>
  h(
    'button',
    { type: 'button', class: 'tab', 'data-tab': t, onclick: () => select(t) },
    t === 'inbox' ? ['Inbox ', badge] : t[0]!.toUpperCase() + t.slice(1),
  ),
);
const main = h('main', null, Object.values(views));

function select(tab: Tab): void {
  for (const [name, el] of Object.entries(views)) el.hidden = name !== tab;
  for (const b of tabs) b.classList.toggle('active', b.dataset.tab === tab);
  if (tab === 'actors') actors.refresh();
  if (tab === 'goals') goals.refresh();
}

document
  .getElementById('app')!
  .replaceChildren(h('nav', null, h('span', { class: 'brand' }, 'Snotra'), tabs, feed), banner, main);

onChange((what, event) => {
  if (what === 'inbox') {
    const n = state.inbox.filter((a) => a.status === 'pending').length;
    badge.textContent = String(n);
    badge.classList.toggle('some', n > 0);
    inbox.update();
  } else if (what === 'runs') runs.update();
  else if (what === 'agents') chat.update();
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
      runs.runChanged(event.runId);
      if (event.type === 'approval.resolved')
        markResolved(main, event.approvalId, `${event.decision} by ${event.by ?? 'the runtime'}`);
      if (!actors.el.hidden && event.type.startsWith('run.')) actors.refresh();
    }
  }
});

select('chat');
connectEvents(applyFrame, setFeed);
void refreshAgents();
void refreshInbox();
void refreshRuns();
