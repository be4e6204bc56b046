import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { RunFeedEvent } from '../../runtime/events.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  fx?.cleanup();
  rt = null;
  fx = null;
});

describe('approval details', () => {
  it('the sidecar’s approval view and the live feed’s approval.requested agree after setRoots (the primary root now)', async () => {
    fx = runtimeFixture(
      {
        workspace: {
          roots: [
            { id: 'project', path: 'project', access: 'read-write', primary: true },
            { id: 'other', path: 'other', access: 'read-write' },
          ],
        },
        agents: { worker: { mode: 'ask' } },
      },
      ['other'],
    );
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'shell', args: { command: 'touch made.txt' } }],
          },
        },
      ],
    });
    const events: RunFeedEvent[] = [];
    rt = await fx.start(model, { onRunEvent: (e) => events.push(e) });
    const other = join(fx.dir, 'other');
    rt.authority.setRoots(
      [
        { id: 'project', path: fx.project, access: 'read-write', primary: false, source: 'workspace' },
        { id: 'other', path: other, access: 'read-write', primary: true, source: 'workspace' },
      ],
      'alice',
    );
    const runId = await rt.runs.submit('worker', 'go');
    const requested = await eventually(
      () => events.find((e) => e.type === 'approval.requested'),
      10_000,
      'the approval request on the feed',
    );
    if (requested.type !== 'approval.requested') throw new Error('unreachable');
    const view = rt.read.approval(requested.approvalId);
    expect(view?.approval.status).toBe('pending');
    expect(view?.details).toEqual({
      targets: requested.targets,
      rule: requested.rule,
      options: requested.options,
      preview: requested.preview,
    });
    // Both show where the command would run now: the new primary root, not the config's.
    expect(requested.preview).toMatchObject({ kind: 'command', command: 'touch made.txt', cwd: other });
    rt.decide(requested.approvalId, 'denied', 'alice');
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'denied' });
  });
});
