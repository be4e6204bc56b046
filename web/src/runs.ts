// Runs: every persisted run, and one run's audit timeline with the hash chain's verification.
import { ApiError, getJson, paths } from './api.ts';
import { h, pretty, syncList, time } from './dom.ts';
import { state } from './state.ts';
import { graphView } from './graph.ts';
import type { AuditEvent, MachineGraph, RunSummary, Verification } from './wire.ts';

export function runsView(): { el: HTMLElement; update(): void; runChanged(runId: string): void } {
  const list = h('ul', { class: 'run-list', 'data-testid': 'run-list' });
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
  let runGraph: Promise<MachineGraph | null> | null = null;

  const show = async (runId: string) => {
    selected = runId;
    for (const li of list.querySelectorAll('li')) li.classList.toggle('selected', li.dataset.key === runId);
    const mine = ++loading;
    try {
      runGraph ??= getJson<MachineGraph>(paths.machine('run')).catch(() => null);
      const [run, audit, graph] = await Promise.all([
        getJson<{ run: RunSummary; outcome: unknown; state: string | null }>(paths.run(runId)),
        getJson<{ events: AuditEvent[]; verification: Verification }>(paths.audit(runId)),
        runGraph,
      ]);
      if (mine !== loading) return;
      const open = detail.querySelector('details.machine-state')?.hasAttribute('open') === true;
      detail.replaceChildren(...detailOf(run.run, run.outcome, audit.events, audit.verification));
      if (graph !== null && run.state !== null)
        detail.insertBefore(
          h(
            'details',
            { class: 'machine-state', open },
            h('summary', null, 'run machine, state ', h('code', { 'data-testid': 'run-state' }, run.state)),
            graphView(graph, run.state),
          ),
          detail.querySelector('.timeline'),
        );
    } catch (err) {
      if (mine !== loading) return;
      detail.replaceChildren(
        h('p', { class: 'error' }, err instanceof ApiError ? `${err.code}: ${err.message}` : String(err)),
      );
    }
  };

  const row = (r: RunSummary) =>
    h(
      'li',
      { class: `status-${r.status}`, onclick: () => void show(r.runId) },
      h('span', { class: 'run-id' }, r.runId),
      h('span', { class: 'badge' }, r.status),
      h('span', { class: 'meta' }, `${r.surface} · ${time(r.updatedAt)}`),
    );

  return {
    el,
    update() {
      syncList(
        list,
        state.runs,
        (r) => r.runId,
        row,
        (li, r) => {
          li.className = `status-${r.status}${r.runId === selected ? ' selected' : ''}`;
          const badge = li.querySelector('.badge');
          if (badge !== null) badge.textContent = r.status;
          const meta = li.querySelector('.meta');
          if (meta !== null) meta.textContent = `${r.surface} · ${time(r.updatedAt)}`;
        },
      );
    },
    runChanged(runId) {
      if (runId === selected) void show(runId);
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

function detailOf(
  run: RunSummary,
  outcome: unknown,
  events: readonly AuditEvent[],
  v: Verification,
): HTMLElement[] {
  return [
    h('h3', null, run.runId),
    h(
      'p',
      { class: 'meta' },
      `${run.agentId} · ${run.surface} · `,
      h('span', { class: 'badge' }, run.status),
    ),
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
          h('span', { class: 'at' }, time(e.at)),
          h('span', { class: 'kind' }, e.kind),
          e.tool ? h('code', null, e.tool) : null,
          e.status ? h('span', { class: 'badge' }, e.status) : null,
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
