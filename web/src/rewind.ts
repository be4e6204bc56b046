// A call's Rewind action (issue 38): the checkpoint taken before the call, the diff back to it
// first (POST /v1/runs/:id/rewind with dryRun), then the rewind on a second, explicit click,
// with its undo offered. Read only when the person opens it.
import { ApiError, getJson, postJson, paths } from './api.ts';
import { h } from './dom.ts';

interface Change {
  readonly root: string;
  readonly path: string;
  readonly change: string;
  readonly from?: string;
}
interface Checkpoint {
  readonly id: string;
  readonly callId: string | null;
  readonly changedSince: readonly Change[];
}
interface Rewind {
  readonly dryRun: boolean;
  readonly changes: readonly Change[];
  readonly patches: readonly { readonly path: string; readonly diff: string }[];
  readonly undo: string | null;
  readonly notRewindable: readonly { readonly tool: string; readonly target: string | null }[];
}

const failure = (err: unknown): string =>
  err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);

function changesOf(r: Rewind): HTMLElement {
  return h(
    'div',
    { class: 'rewind-diff', 'data-testid': 'rewind-diff' },
    h(
      'ul',
      { class: 'changes' },
      r.changes.map((c) =>
        h(
          'li',
          null,
          h('code', null, c.change),
          ` ${c.root}:${c.from === undefined ? '' : `${c.from} → `}${c.path}`,
        ),
      ),
    ),
    r.patches.map((p) => h('pre', { class: 'patch' }, p.diff)),
    r.notRewindable.length === 0
      ? null
      : h(
          'p',
          { class: 'not-rewindable' },
          'Not rewindable (left the machine; compensate by hand): ',
          r.notRewindable.map((e) => `${e.tool}${e.target === null ? '' : ` → ${e.target}`}`).join(', '),
        ),
  );
}

/** The Rewind action of call `callId` of run `runId`. */
export function rewindOf(runId: string, callId: string): HTMLElement {
  const body = h('div', { class: 'rewind-body' }, 'reading the checkpoints…');
  const box = h(
    'details',
    { class: 'rewind', 'data-testid': 'rewind' },
    h('summary', null, 'rewind'),
    body,
  ) as HTMLDetailsElement;
  const post = (checkpoint: string, dryRun: boolean) =>
    postJson<{ rewind: Rewind }>(paths.rewind(runId), { checkpoint, dryRun }).then((a) => a.rewind);
  const show = (checkpoint: string, label: string): void => {
    body.replaceChildren('computing the diff…');
    post(checkpoint, true).then(
      (preview) =>
        body.replaceChildren(
          preview.changes.length === 0
            ? h('p', null, 'Nothing changed since this checkpoint.')
            : changesOf(preview),
          h(
            'button',
            {
              class: 'danger',
              'data-testid': 'rewind-confirm',
              onclick: () => {
                body.replaceChildren('rewinding…');
                post(checkpoint, false).then(
                  (done) => {
                    body.replaceChildren(
                      h(
                        'p',
                        { 'data-testid': 'rewind-done' },
                        `Rewound ${done.changes.length} path(s) ${label}.`,
                      ),
                    );
                    if (done.undo !== null) {
                      const undo = done.undo;
                      body.append(
                        h(
                          'button',
                          { 'data-testid': 'rewind-undo', onclick: () => show(undo, 'back (undo)') },
                          'Undo this rewind…',
                        ),
                      );
                    }
                  },
                  (err: unknown) =>
                    body.replaceChildren(
                      h('p', { class: 'error', 'data-testid': 'rewind-error' }, failure(err)),
                    ),
                );
              },
            },
            `Rewind ${label}`,
          ),
        ),
      (err: unknown) =>
        body.replaceChildren(h('p', { class: 'error', 'data-testid': 'rewind-error' }, failure(err))),
    );
  };
  let asked = false;
  box.addEventListener('toggle', () => {
    if (!box.open || asked) return;
    asked = true;
    getJson<{ checkpoints: Checkpoint[] }>(paths.checkpoints(runId)).then(
      ({ checkpoints }) => {
        const ck = checkpoints.find((c) => c.callId === callId);
        if (ck === undefined) body.textContent = 'No checkpoint: this call could not change a root.';
        else
          body.replaceChildren(
            h('p', null, `${ck.changedSince.length} path(s) changed since the checkpoint before this call.`),
            h(
              'button',
              { 'data-testid': 'rewind-preview', onclick: () => show(ck.id, 'to before this call') },
              'Show the diff',
            ),
          );
      },
      (err: unknown) => {
        asked = false;
        body.textContent = failure(err);
      },
    );
  });
  return box;
}
