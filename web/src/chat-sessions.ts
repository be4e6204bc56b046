// The Chat tab's conversations: every durable session by its title and last activity, the one
// open now, its title editable (PATCH /v1/sessions/:id), and an opened session's earlier runs
// read back as conversations so the next message continues it.
import { ApiError, getJson, paths, renameSession } from './api.ts';
import { conversationView } from './conversation.ts';
import { h, syncList } from './dom.ts';
import { refreshRuns, refreshSessions, state } from './state.ts';
import { dateTime } from './when.ts';
import type { FeedEvent, RunConversation, SessionMessage, SessionSummary } from './wire.ts';

/** A session's name in lists: its title (the first message, or a human's edit), else its agent. */
export function sessionTitle(s: SessionSummary): string {
  return s.title ?? `New conversation with ${s.agentId}`;
}

const metaOf = (s: SessionSummary): string =>
  `${s.agentId} · ${s.surface} · ${dateTime(s.updatedAt)} · ${s.runs} ${s.runs === 1 ? 'run' : 'runs'}`;

const errorText = (err: unknown): string =>
  err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);

/** The list of conversations, newest activity first, with the one open now marked. */
export function sessionList(open: (s: SessionSummary) => void, fresh: () => void) {
  const list = h('ul', {
    class: 'run-list session-list',
    'data-testid': 'session-list',
    'aria-label': 'conversations',
  });
  const start = h(
    'button',
    { type: 'button', class: 'new-session', 'data-testid': 'new-session', onclick: fresh },
    'New conversation',
  );
  const el = h(
    'aside',
    { class: 'sessions', 'aria-label': 'conversations' },
    h('h3', null, 'Conversations'),
    start,
    list,
  );
  let current: string | null = null;

  const row = (s: SessionSummary) =>
    h(
      'li',
      null,
      h(
        'button',
        { type: 'button', class: 'run-pick', onclick: () => open(s) },
        h('span', { class: 'run-title' }, sessionTitle(s)),
        h('span', { class: 'badge' }, s.activeRunId === null ? 'idle' : 'running'),
        h('span', { class: 'meta' }, metaOf(s)),
      ),
    );

  const update = (currentId: string | null) => {
    current = currentId;
    syncList(
      list,
      state.sessions,
      (s) => s.sessionId,
      row,
      (li, s) => {
        li.querySelector('.run-title')!.textContent = sessionTitle(s);
        li.querySelector('.badge')!.textContent = s.activeRunId === null ? 'idle' : 'running';
        li.querySelector('.meta')!.textContent = metaOf(s);
      },
    );
    for (const li of list.querySelectorAll('li')) {
      const on = li.dataset.key === current;
      li.classList.toggle('selected', on);
      const pick = li.querySelector('button');
      if (on) pick?.setAttribute('aria-current', 'true');
      else pick?.removeAttribute('aria-current');
    }
  };
  return { el, update };
}

/** The open conversation's title with a Rename button (once the session exists). */
export function sessionHeader() {
  const title = h('h3', { class: 'run-title', 'data-testid': 'session-title' }, 'New conversation');
  const rename = h(
    'button',
    { type: 'button', class: 'rename', 'data-testid': 'rename-session', hidden: true },
    'Rename',
  );
  const el = h('div', { class: 'title-row' }, title, rename);
  let shown: SessionSummary | null = null;
  let editing = false;

  rename.addEventListener('click', () => {
    const s = shown;
    if (s === null) return;
    editing = true;
    const input = h('input', {
      type: 'text',
      class: 'title-input',
      value: s.title ?? '',
      maxlength: 200,
      'aria-label': 'conversation title',
      'data-testid': 'session-title-input',
    });
    const status = h('span', { class: 'status error', role: 'status' });
    const done = () => {
      editing = false;
      show(shown);
    };
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') done();
      if (ev.key !== 'Enter') return;
      ev.preventDefault();
      renameSession(s.sessionId, input.value)
        .then(async () => {
          await Promise.all([refreshSessions(), refreshRuns()]);
          done();
        })
        .catch((err: unknown) => (status.textContent = errorText(err)));
    });
    title.replaceChildren(input, status);
    rename.hidden = true;
    input.focus();
  });

  const show = (s: SessionSummary | null) => {
    shown = s;
    if (editing) return;
    title.textContent = s === null ? 'New conversation' : sessionTitle(s);
    rename.hidden = s === null;
  };
  return { el, show };
}

/** A past run's block, read back from its conversation. */
function pastRun(runId: string, c: RunConversation): HTMLElement {
  return h('div', { class: 'run past', 'data-run': runId }, conversationView(c));
}

/**
 * Keeps an opened session's runs current: a run shown read back (one still going when it was
 * opened, or one continued elsewhere) is read again after each event of it or its sub-agents.
 * One read at a time per run; events meanwhile cause one more.
 */
export function pastRunFollower(transcript: HTMLElement): (e: FeedEvent) => void {
  const reading = new Map<string, boolean>();
  const read = (runId: string) => {
    reading.set(runId, false);
    getJson<RunConversation>(paths.conversation(runId))
      .then((c) => {
        const shown = transcript.querySelector(`.run.past[data-run="${CSS.escape(runId)}"]`);
        shown?.replaceWith(pastRun(runId, c));
      })
      .catch(() => {
        // What is shown stays; the next event reads again.
      })
      .finally(() => {
        const again = reading.get(runId) === true;
        reading.delete(runId);
        if (again) read(runId);
      });
  };
  return (e) => {
    if (e.type === 'model.delta' || e.type === 'model.usage') return;
    // A sub-agent's run id is its top-level run's, "/", and the calls that lead to it.
    const runId = e.runId.split('/')[0] as string;
    if (transcript.querySelector(`.run.past[data-run="${CSS.escape(runId)}"]`) === null) return;
    if (reading.has(runId)) reading.set(runId, true);
    else read(runId);
  };
}

/** How many of an opened session's last runs are read back (each is one request to the sidecar). */
const SHOWN_RUNS = 20;

/**
 * An opened session's last runs, in the order they were added to it, each as its conversation
 * (sub-agents nested in place); older ones are counted, not read. A run whose record is gone is
 * named, not skipped silently.
 */
export async function sessionHistory(s: SessionSummary): Promise<HTMLElement[]> {
  const { messages } = await getJson<{ messages: SessionMessage[] }>(paths.sessionMessages(s.sessionId));
  const runIds = [...new Set(messages.map((m) => m.runId))];
  if (s.activeRunId !== null && !runIds.includes(s.activeRunId)) runIds.push(s.activeRunId);
  const hidden = Math.max(0, runIds.length - SHOWN_RUNS);
  const past = await Promise.all(
    runIds.slice(hidden).map((runId) =>
      getJson<RunConversation>(paths.conversation(runId)).then(
        (c) => pastRun(runId, c),
        (err: unknown) =>
          h('p', { class: 'status-line error' }, `a run of this conversation: ${errorText(err)}`),
      ),
    ),
  );
  return hidden === 0
    ? past
    : [
        h(
          'p',
          { class: 'status-line' },
          `${hidden} earlier ${hidden === 1 ? 'run' : 'runs'} of this conversation are in the Runs tab`,
        ),
        ...past,
      ];
}
