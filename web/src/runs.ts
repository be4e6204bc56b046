// Runs: every top-level run by its conversation's title (editable), and one run as its
// conversation, with its audit timeline and the hash chain's verification as a second tab.
import { ApiError, getJson, paths, renameSession } from './api.ts';
import { conversationView } from './conversation.ts';
import { h, pretty, syncList } from './dom.ts';
import { refreshRuns, state } from './state.ts';
import { machineDiagram } from './svg.ts';
import { tabList } from './tabs.ts';
import { thinkingIndicator } from './thinking.ts';
import { dateTime } from './when.ts';
import type { AuditEvent, FeedEvent, RunConversation, RunSummary, Verification } from './wire.ts';

/** A run's name in lists: its conversation's title, else its agent and surface (never its id). */
export function runTitle(r: RunSummary): string {
  return r.title ?? `${r.agentId} via ${r.surface}`;
}

export function runsView(): { el: HTMLElement; update(): void; runChanged(e: FeedEvent): void } {
  const list = h('ul', { class: 'run-list', 'data-testid': 'run-list', 'aria-label': 'runs' });
  const head = h('div', { class: 'run-head' });
  const conversation = h('div', { class: 'run-conversation' });
  const live = h('div', { class: 'msg agent streaming', 'data-testid': 'run-streaming', hidden: true });
  const thinking = thinkingIndicator();
  const audit = h('div', { class: 'run-audit' });
  const talk = h('div', { class: 'run-talk' }, conversation, live, thinking.el);
  const panes = tabList('Run views', [
    { id: 'conversation', label: 'Conversation', panel: talk },
    { id: 'audit', label: 'Audit', panel: audit },
  ]);
  const detail = h(
    'div',
    { class: 'run-detail', 'data-testid': 'run-detail' },
    h('p', { class: 'empty' }, 'Pick a run.'),
  );
  const el = h(
    'section',
    { class: 'view runs' },
    h('h2', null, 'Runs'),
    h('div', { class: 'split' }, list, detail),
  );
  let selected: string | null = null;
  let loading = 0;

  const show = async (runId: string) => {
    if (selected !== runId) {
      selected = runId;
      live.hidden = true;
      live.textContent = '';
      thinking.stop();
      panes.select('conversation');
    }
    for (const li of list.querySelectorAll('li')) li.classList.toggle('selected', li.dataset.key === runId);
    const mine = ++loading;
    try {
      const [run, convo, trail] = await Promise.all([
        getJson<{ run: RunSummary; outcome: unknown; state: string | null }>(paths.run(runId)),
        getJson<RunConversation>(paths.conversation(runId)),
        getJson<{ events: AuditEvent[]; verification: Verification }>(paths.audit(runId)),
      ]);
      if (mine !== loading) return;
      const summary = state.runs.find((r) => r.runId === runId) ?? run.run;
      head.replaceChildren(...headOf(summary));
      conversation.replaceChildren(conversationView(convo));
      const open = audit.querySelector('details.machine-state')?.hasAttribute('open') === true;
      audit.replaceChildren(...auditOf(run.outcome, trail.events, trail.verification));
      if (run.state !== null) {
        const diagram = await machineDiagram('run', run.state).catch(() => null);
        if (mine !== loading || diagram === null) return;
        audit.insertBefore(
          h(
            'details',
            { class: 'machine-state', open },
            h('summary', null, 'run machine, state ', h('code', { 'data-testid': 'run-state' }, run.state)),
            diagram.el,
          ),
          audit.querySelector('.timeline'),
        );
      }
      if (detail.firstElementChild !== head) detail.replaceChildren(head, panes.el, talk, audit);
    } catch (err) {
      if (mine !== loading) return;
      detail.replaceChildren(
        h('p', { class: 'error' }, err instanceof ApiError ? `${err.code}: ${err.message}` : String(err)),
      );
    }
  };

  const headOf = (r: RunSummary): HTMLElement[] => {
    const title = h('h3', { class: 'run-title', 'data-testid': 'run-title' }, runTitle(r));
    const meta = h(
      'p',
      { class: 'meta' },
      `${r.agentId} · ${r.surface} · ${dateTime(r.updatedAt)} · `,
      h('span', { class: 'badge' }, r.status),
    );
    if (r.sessionId == null) return [title, meta];
    const sessionId = r.sessionId;
    const rename = h('button', { type: 'button', class: 'rename', 'data-testid': 'rename' }, 'Rename');
    rename.addEventListener('click', () => {
      const input = h('input', {
        type: 'text',
        class: 'title-input',
        value: r.title ?? '',
        maxlength: 200,
        'aria-label': 'conversation title',
        'data-testid': 'title-input',
      });
      const status = h('span', { class: 'status', role: 'status' });
      const save = async () => {
        try {
          await renameSession(sessionId, input.value);
          await refreshRuns();
          if (selected !== null) void show(selected);
        } catch (err) {
          status.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
        }
      };
      input.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') void save();
        if (ev.key === 'Escape' && selected !== null) void show(selected);
      });
      title.replaceChildren(input, status);
      input.focus();
    });
    return [h('div', { class: 'title-row' }, title, rename), meta];
  };

  const row = (r: RunSummary) =>
    h(
      'li',
      { class: `status-${r.status}` },
      h(
        'button',
        { type: 'button', class: 'run-pick', onclick: () => void show(r.runId) },
        h('span', { class: 'run-title' }, runTitle(r)),
        h('span', { class: 'badge' }, r.status),
        h('span', { class: 'meta' }, `${r.agentId} · ${dateTime(r.updatedAt)}`),
      ),
    );

  return {
    el,
    update() {
      syncList(
        list,
        state.runs.filter((r) => r.parentRunId === null),
        (r) => r.runId,
        row,
        (li, r) => {
          li.className = `status-${r.status}${r.runId === selected ? ' selected' : ''}`;
          const set = (sel: string, text: string) => {
            const e = li.querySelector(sel);
            if (e !== null) e.textContent = text;
          };
          set('.run-title', runTitle(r));
          set('.badge', r.status);
          set('.meta', `${r.agentId} · ${dateTime(r.updatedAt)}`);
        },
      );
    },
    runChanged(e) {
      if (selected === null || (e.runId !== selected && e.parentRunId !== selected)) return;
      // Streamed text shows as it comes; everything else reads the conversation again.
      if (e.runId === selected && e.type === 'model.delta') {
        thinking.stop();
        live.hidden = false;
        live.append(e.delta);
        return;
      }
      if (e.type === 'model.usage') return;
      if (e.runId === selected) {
        if (e.type === 'run.started' || e.type === 'tool.completed' || e.type === 'tool.denied')
          thinking.start();
        else thinking.stop();
        if (e.type === 'model.text') {
          live.hidden = true;
          live.textContent = '';
        }
      }
      void show(selected);
    },
  };
}

function verificationOf(v: Verification): HTMLElement {
  return v.ok
    ? h(
        'p',
        { class: 'verified ok', 'data-testid': 'verification' },
        `✓ audit hash chain verified (${v.count} events)`,
      )
    : h(
        'p',
        { class: 'verified broken', 'data-testid': 'verification' },
        `✗ audit hash chain broken at event ${v.brokenSeq}: ${v.reason}`,
      );
}

function auditOf(outcome: unknown, events: readonly AuditEvent[], v: Verification): HTMLElement[] {
  return [
    verificationOf(v),
    outcome === null
      ? h('span')
      : h('details', null, h('summary', null, 'outcome'), h('pre', null, pretty(outcome))),
    h(
      'ol',
      { class: 'timeline', 'data-testid': 'timeline' },
      events.map((e) =>
        h(
          'li',
          { class: `kind-${e.kind}`, 'data-kind': e.kind },
          h('span', { class: 'at' }, dateTime(e.at)),
          h('span', { class: 'kind' }, e.kind),
          e.tool ? h('code', null, e.tool) : null,
          e.status ? h('span', { class: `badge decision-${e.status}` }, e.status) : null,
          e.resource ? h('span', { class: 'resource' }, e.resource) : null,
          byOf(e.detail) === null ? null : h('span', { class: 'by' }, `by ${byOf(e.detail)}`),
          e.detail === undefined || e.detail === null
            ? null
            : h('details', null, h('summary', null, 'detail'), h('pre', null, pretty(e.detail))),
        ),
      ),
    ),
  ];
}

function byOf(detail: unknown): string | null {
  if (typeof detail !== 'object' || detail === null) return null;
  const d = detail as Record<string, unknown>;
  const by = d.by ?? d.decidedBy;
  return typeof by === 'string' ? by : null;
}
