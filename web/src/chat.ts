// Chat: messages to an agent, its answers, and inline approval cards for its calls.
import { ApiError, paths, postJson } from './api.ts';
import { approvalCard, fromRequested } from './card.ts';
import { h } from './dom.ts';
import { state } from './state.ts';
import type { FeedEvent } from './wire.ts';

export function chatView(): { el: HTMLElement; update(): void; onEvent(e: FeedEvent): void } {
  // One session per agent and page load: "for this session" approvals last as long as this
  // window and cover only the agent they were given to (a grant is bound to its session, and a
  // session shared by every agent of the window would hand one agent's grant to the others).
  const sessions = new Map<string, string>();
  const sessionOf = (agentId: string): string => {
    let id = sessions.get(agentId);
    if (id === undefined) {
      id = `app:${crypto.randomUUID()}`;
      sessions.set(agentId, id);
    }
    return id;
  };
  const runs = new Map<string, { block: HTMLElement; shown: number }>();
  const agent = h('select', { class: 'agent', 'aria-label': 'agent', 'data-testid': 'agent' });
  const text = h('textarea', {
    class: 'message',
    rows: 2,
    placeholder: 'Message the agent…',
    'aria-label': 'message',
    'data-testid': 'message',
  });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send');
  const error = h('p', { class: 'error', role: 'alert' });
  const transcript = h('div', { class: 'transcript', 'data-testid': 'transcript' });
  const form = h('form', { class: 'composer' }, agent, text, send);
  const el = h('section', { class: 'view chat' }, h('h2', null, 'Chat'), transcript, error, form);

  const render = (runId: string) => {
    const r = runs.get(runId);
    const events = state.byRun.get(runId) ?? [];
    if (r === undefined) return;
    for (; r.shown < events.length; r.shown += 1) {
      const e = events[r.shown] as FeedEvent;
      const item = itemOf(e);
      if (item !== null) r.block.appendChild(item);
    }
    transcript.scrollTop = transcript.scrollHeight;
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const message = text.value.trim();
    if (message === '' || agent.value === '') return;
    send.disabled = true;
    error.textContent = '';
    const block = h('div', { class: 'run' }, h('div', { class: 'msg user' }, message));
    transcript.appendChild(block);
    postJson<{ runId: string }>(paths.chat(agent.value), { text: message, sessionId: sessionOf(agent.value) })
      .then(({ runId }) => {
        block.dataset.run = runId;
        runs.set(runId, { block, shown: 0 });
        text.value = '';
        render(runId);
      })
      .catch((err: unknown) => {
        block.remove();
        error.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
      })
      .finally(() => (send.disabled = false));
  });
  text.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });

  return {
    el,
    update() {
      if (agent.options.length === state.agents.length) return;
      agent.replaceChildren(...state.agents.map((a) => h('option', { value: a.id }, `${a.id} (${a.mode})`)));
    },
    onEvent(e) {
      // A sub-agent's run joins its parent's block.
      if (!runs.has(e.runId) && e.parentRunId !== null && runs.has(e.parentRunId)) {
        const parent = runs.get(e.parentRunId)!;
        const block = h('div', { class: 'run sub' }, h('div', { class: 'label' }, `sub-agent ${e.agentId}`));
        parent.block.appendChild(block);
        runs.set(e.runId, { block, shown: 0 });
      }
      render(e.runId);
    },
  };
}

function itemOf(e: FeedEvent): HTMLElement | null {
  switch (e.type) {
    case 'model.text':
      return e.delta.trim() === ''
        ? null
        : h('div', { class: 'msg agent', 'data-testid': 'answer' }, e.delta);
    case 'tool.proposed':
      return h('div', { class: 'tool-line' }, h('code', null, e.tool), ' proposed');
    case 'approval.requested':
      return approvalCard(fromRequested(e), () => {});
    case 'tool.completed':
      return h(
        'details',
        { class: `result ${e.ok ? 'ok' : 'failed'}` },
        h('summary', null, h('code', null, e.tool), e.ok ? ' completed' : ' failed'),
        h('pre', null, e.content, e.truncated ? '\n…' : ''),
      );
    case 'tool.denied':
      return h('div', { class: 'tool-line denied' }, h('code', null, e.tool), ` denied: ${e.message}`);
    case 'run.parked':
      return h('div', { class: 'status-line' }, 'parked: waiting in the Inbox');
    case 'run.completed':
      return h('div', { class: 'status-line done', 'data-testid': 'run-completed' }, 'run completed');
    case 'run.failed':
      return h('div', { class: 'status-line error' }, `run ${e.outcome}: ${e.message}`);
    default:
      return null;
  }
}
