// Chat: messages to an agent, its answers streamed as they are written, a thinking indicator,
// each call with its decision, inline approval cards, and sub-agents' runs nested in place;
// beside it the conversations (sessions), one of which is open and continued by the next message.
import { ApiError, paths, postJson } from './api.ts';
import { approvalCard, fromRequested } from './card.ts';
import { pastRunFollower, sessionHeader, sessionHistory, sessionList } from './chat-sessions.ts';
import { whyOf } from './conversation.ts';
import { h } from './dom.ts';
import { state } from './state.ts';
import { thinkingIndicator } from './thinking.ts';
import type { FeedEvent } from './wire.ts';

/** One run's place in the transcript. */
interface RunBlock {
  readonly block: HTMLElement;
  readonly body: HTMLElement;
  readonly thinking: ReturnType<typeof thinkingIndicator>;
  shown: number;
  /** The answer being streamed (model.delta), until its model.text arrives. */
  streaming: HTMLElement | null;
  /** Each call's line, by call id (a sub-agent's run is placed after its spawn_agent call). */
  readonly calls: Map<string, HTMLElement>;
}

/** The events after which the run waits for its model. */
const ASKS_MODEL = new Set(['run.started', 'tool.completed', 'tool.denied']);
/** The events after which it does not (it answered, waits for a human, or ended). */
const MODEL_DONE = new Set([
  'model.delta',
  'model.text',
  'tool.proposed',
  'approval.requested',
  'run.parked',
  'run.completed',
  'run.failed',
]);

export function chatView(): {
  el: HTMLElement;
  update(): void;
  sessionsChanged(): void;
  onEvent(e: FeedEvent): void;
} {
  // One session per agent until another is opened: "for this session" approvals last as long as
  // the conversation and cover only the agent they were given to (a grant is bound to its
  // session, and a session shared by every agent would hand one agent's grant to the others).
  const sessions = new Map<string, string>();
  const sessionOf = (agentId: string): string => {
    let id = sessions.get(agentId);
    if (id === undefined) {
      id = `app:${crypto.randomUUID()}`;
      sessions.set(agentId, id);
    }
    return id;
  };
  const runs = new Map<string, RunBlock>();
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
  const transcript = h('div', {
    class: 'transcript',
    'data-testid': 'transcript',
    role: 'log',
    'aria-label': 'conversation',
  });
  const form = h('form', { class: 'composer' }, agent, text, send);
  const header = sessionHeader();
  const followPast = pastRunFollower(transcript);
  const currentSession = () => state.sessions.find((x) => x.sessionId === sessions.get(agent.value)) ?? null;
  const sessionsChanged = () => {
    list.update(sessions.get(agent.value) ?? null);
    header.show(currentSession());
  };
  // Opening another conversation: its runs so far, then the next message continues it.
  let opening = 0;
  const list = sessionList(
    (session) => {
      const mine = ++opening;
      error.textContent = '';
      if (![...agent.options].some((o) => o.value === session.agentId))
        agent.append(h('option', { value: session.agentId }, session.agentId));
      agent.value = session.agentId;
      sessions.set(session.agentId, session.sessionId);
      transcript.replaceChildren(h('p', { class: 'empty' }, 'Reading the conversation…'));
      sessionsChanged();
      sessionHistory(session)
        .then((past) => {
          if (mine !== opening) return;
          transcript.replaceChildren(...past);
          transcript.scrollTop = transcript.scrollHeight;
        })
        .catch((err: unknown) => {
          if (mine !== opening) return;
          transcript.replaceChildren();
          error.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
        });
      text.focus();
    },
    () => {
      ++opening;
      if (agent.value !== '') sessions.delete(agent.value);
      transcript.replaceChildren();
      error.textContent = '';
      sessionsChanged();
      text.focus();
    },
  );
  agent.addEventListener('change', sessionsChanged);
  const el = h(
    'section',
    { class: 'view chat' },
    h('h2', null, 'Chat'),
    h(
      'div',
      { class: 'split' },
      list.el,
      h('div', { class: 'chat-main' }, header.el, transcript, error, form),
    ),
  );

  const blockFor = (block: HTMLElement): RunBlock => {
    const thinking = thinkingIndicator();
    const body = h('div', { class: 'run-body' });
    block.append(body, thinking.el);
    return { block, body, thinking, shown: 0, streaming: null, calls: new Map() };
  };

  // A sub-agent's run is placed in its parent's block, after the spawn_agent call that started it
  // (a child's id is its parent's, "/", and that call's id). True when the run has a block.
  const adopt = (runId: string): boolean => {
    if (runs.has(runId)) return true;
    const first = state.byRun.get(runId)?.[0];
    const parent = first?.parentRunId == null ? undefined : runs.get(first.parentRunId);
    if (first === undefined || parent === undefined) return false;
    const block = h(
      'div',
      { class: 'run sub', 'data-run': runId, 'data-testid': 'sub-run' },
      h('div', { class: 'label' }, `sub-agent ${first.agentId}`),
    );
    const prefix = `${first.parentRunId}/`;
    const at = runId.startsWith(prefix) ? parent.calls.get(runId.slice(prefix.length)) : undefined;
    if (at !== undefined) at.after(block);
    else parent.body.appendChild(block);
    runs.set(runId, blockFor(block));
    return true;
  };

  const render = (runId: string) => {
    const r = runs.get(runId);
    const events = state.byRun.get(runId) ?? [];
    if (r === undefined) return;
    for (; r.shown < events.length; r.shown += 1) show(r, events[r.shown] as FeedEvent);
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
        sessionsChanged();
        block.dataset.run = runId;
        const r = blockFor(block);
        runs.set(runId, r);
        r.thinking.start();
        text.value = '';
        render(runId);
        // Its sub-agents' runs whose events came before this answer (parents come first in the map).
        for (const id of state.byRun.keys()) if (!runs.has(id) && adopt(id)) render(id);
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
      const chosen = agent.value;
      agent.replaceChildren(...state.agents.map((a) => h('option', { value: a.id }, `${a.id} (${a.mode})`)));
      if (state.agents.some((a) => a.id === chosen)) agent.value = chosen;
      sessionsChanged();
    },
    sessionsChanged,
    onEvent(e) {
      if (adopt(e.runId)) render(e.runId);
      else followPast(e);
    },
  };
}

function show(r: RunBlock, e: FeedEvent): void {
  if (ASKS_MODEL.has(e.type)) r.thinking.start();
  else if (MODEL_DONE.has(e.type)) r.thinking.stop();
  const item = itemOf(r, e);
  if (item !== null) r.body.appendChild(item);
}

function itemOf(r: RunBlock, e: FeedEvent): HTMLElement | null {
  switch (e.type) {
    case 'model.delta':
      if (r.streaming === null) {
        r.streaming = h('div', {
          class: 'msg agent streaming',
          'data-testid': 'answer',
          'aria-busy': 'true',
        });
        r.body.appendChild(r.streaming);
      }
      r.streaming.append(e.delta);
      return null;
    case 'model.text': {
      // The whole turn: it replaces what was streamed of it.
      const streamed = r.streaming;
      r.streaming = null;
      if (streamed !== null) {
        streamed.textContent = e.delta;
        streamed.classList.remove('streaming');
        streamed.removeAttribute('aria-busy');
        if (e.delta.trim() === '') streamed.remove();
        return null;
      }
      return e.delta.trim() === ''
        ? null
        : h('div', { class: 'msg agent', 'data-testid': 'answer' }, e.delta);
    }
    case 'tool.proposed': {
      const line = h(
        'div',
        { class: 'tool-line', 'data-call': e.callId },
        h('code', null, e.tool),
        ' proposed',
      );
      r.calls.set(e.callId, line);
      return line;
    }
    case 'tool.decided': {
      const line = r.calls.get(e.callId);
      if (line === undefined || e.decision.decision !== 'allow') return null;
      line.replaceChildren(
        h('code', null, e.tool),
        ' ',
        h('span', { class: 'chip policy-allow' }, 'allowed'),
        ' ',
        whyOf(e.decision.reason, e.decision.risk, e.decision.rule.id) ?? '',
      );
      return null;
    }
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
      return h(
        'div',
        { class: 'tool-line denied' },
        h('code', null, e.tool),
        ' not run: ',
        whyOf(e.reason, null, null) ?? e.message,
        e.reason === 'human_denied' || e.message === ''
          ? null
          : h('small', { class: 'rule' }, ` ${e.message}`),
      );
    case 'run.parked':
      return h('div', { class: 'status-line' }, 'Parked: waiting in the Inbox');
    case 'run.completed':
      return h('div', { class: 'status-line done', 'data-testid': 'run-completed' }, 'run completed');
    case 'run.failed':
      return h('div', { class: 'status-line error' }, `run ${e.outcome}: ${e.message}`);
    default:
      return null;
  }
}
