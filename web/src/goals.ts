// Goals: every configured goal loop (GET /v1/goals) with its status, iterations and usage, and
// the human's controls (POST /v1/goals/:id/{start,pause,resume,cancel}). Re-read on every change
// of a goal node of the live actor tree. The objective and the model's evidence are not shown.
import { ApiError, getJson, goalAction, paths, type GoalAction } from './api.ts';
import { dollars } from './budget-text.ts';
import { h, syncList } from './dom.ts';
import type { GoalEntry, GoalRecord } from './wire.ts';

const ACTIONS: readonly GoalAction[] = ['start', 'pause', 'resume', 'cancel'];

/** Which controls can change something now (the runtime refuses the others with 409 anyway). */
function enabled(r: GoalRecord | null, action: GoalAction): boolean {
  const status = r?.status ?? null;
  switch (action) {
    case 'start':
      return status === null || !['active', 'paused'].includes(status);
    case 'pause':
      return status === 'active';
    case 'resume':
      return status === 'paused';
    case 'cancel':
      return status === 'active' || status === 'paused';
  }
}

function statusText(r: GoalRecord | null): string {
  if (r === null) return 'not started';
  return r.stopReason === null ? r.status : `${r.status} (${r.stopReason})`;
}

function limitText(used: number, limit: number | undefined, unit = ''): string {
  return limit === undefined ? `${used}${unit}` : `${used}/${limit}${unit}`;
}

function usageText(g: GoalEntry): string {
  const r = g.record;
  if (r === null) return 'nothing spent';
  return [
    `model calls ${limitText(r.used.modelCalls, r.budget.modelCalls)}`,
    `tool calls ${limitText(r.used.toolCalls, r.budget.toolCalls)}`,
    `wall time ${limitText(Math.round(r.used.wallTimeMs / 1000), r.budget.wallTimeMs === undefined ? undefined : Math.round(r.budget.wallTimeMs / 1000), ' s')}`,
    // Tokens and cost: when the goal limits them or has spent some.
    ...(r.budget.tokens === undefined && !(r.used.tokens ?? 0)
      ? []
      : [`tokens ${limitText(r.used.tokens ?? 0, r.budget.tokens)}`]),
    ...(r.budget.costUsd === undefined && !(r.used.costUsd ?? 0)
      ? []
      : [
          `cost ${dollars(r.used.costUsd ?? 0)}${r.budget.costUsd === undefined ? '' : `/${dollars(r.budget.costUsd)}`}`,
        ]),
  ].join(' · ');
}

export function goalsView(): { el: HTMLElement; refresh(): void } {
  const list = h('div', { class: 'cards goal-list', 'data-testid': 'goal-list' });
  const empty = h(
    'p',
    { class: 'empty', hidden: true },
    'No goal loops are configured (surfaces.goalLoops).',
  );
  const error = h('p', { class: 'error', 'data-testid': 'goals-error' });
  const el = h('section', { class: 'view goals' }, h('h2', null, 'Goals'), error, empty, list);
  let busy = false;
  let again = false;

  const fill = (card: HTMLElement, g: GoalEntry) => {
    const r = g.record;
    card.className = `card goal status-${r?.status ?? 'not_started'}${r?.parked ? ' parked' : ''}`;
    card.dataset.status = r?.status ?? 'not_started';
    const set = (sel: string, text: string) => {
      const x = card.querySelector(sel);
      if (x !== null) x.textContent = text;
    };
    set('.goal-status', statusText(r));
    set('.goal-iterations', r === null ? 'iteration 0' : `iteration ${r.iteration}/${r.maxIterations}`);
    set('.goal-usage', usageText(g));
    const parked = card.querySelector<HTMLElement>('.badge.parked');
    if (parked !== null) parked.hidden = !(r?.status === 'active' && r.parked);
    for (const b of card.querySelectorAll<HTMLButtonElement>('button[data-action]'))
      if (!b.classList.contains('pending')) b.disabled = !enabled(r, b.dataset.action as GoalAction);
    const its = card.querySelector('.goal-runs');
    if (its !== null)
      its.replaceChildren(
        ...g.iterations
          .slice(-5)
          .map((it) =>
            h(
              'li',
              { 'data-iteration': it.iteration },
              h('span', null, `#${it.iteration}`),
              h('code', null, it.runId),
              h('span', { class: 'badge' }, it.outcome ?? it.status),
            ),
          ),
      );
  };

  const create = (g: GoalEntry): HTMLElement => {
    const note = h('p', { class: 'error goal-error', 'data-testid': 'goal-error' });
    const card = h(
      'article',
      { class: 'card goal', 'data-goal': g.id, 'data-testid': 'goal-card' },
      h(
        'header',
        null,
        h('strong', { class: 'goal-id' }, g.id),
        h('span', { class: 'meta' }, `agent ${g.agent}`),
        h('span', { class: 'badge goal-status', 'data-testid': 'goal-status' }),
        h('span', { class: 'badge parked', hidden: true }, 'parked: waiting in the Inbox'),
      ),
      h(
        'p',
        { class: 'meta' },
        h('span', { class: 'goal-iterations', 'data-testid': 'goal-iterations' }),
        ' · ',
        h('span', { class: 'goal-usage', 'data-testid': 'goal-usage' }),
      ),
      h('ol', { class: 'goal-runs' }),
      h(
        'div',
        { class: 'actions' },
        ACTIONS.map((action) =>
          h(
            'button',
            {
              type: 'button',
              class: `goal-action ${action}`,
              'data-action': action,
              onclick: (e: Event) => {
                const b = e.currentTarget as HTMLButtonElement;
                b.disabled = true;
                b.classList.add('pending');
                note.textContent = '';
                void goalAction(g.id, action)
                  .catch((err: unknown) => {
                    note.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
                  })
                  .finally(() => {
                    b.classList.remove('pending');
                    refresh();
                  });
              },
            },
            action[0]!.toUpperCase() + action.slice(1),
          ),
        ),
      ),
      note,
    );
    fill(card, g);
    return card;
  };

  const load = async () => {
    try {
      const { goals } = await getJson<{ goals: GoalEntry[] }>(paths.goals);
      error.textContent = '';
      empty.hidden = goals.length > 0;
      syncList(list, goals, (g) => g.id, create, fill);
    } catch (err) {
      error.textContent = `The goals could not be read: ${err instanceof ApiError ? `${err.code}: ${err.message}` : String(err)}`;
    }
  };

  // One read at a time; changes during it cause exactly one more.
  const refresh = () => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    void load().finally(() => {
      busy = false;
      if (again) {
        again = false;
        refresh();
      }
    });
  };
  return { el, refresh };
}
