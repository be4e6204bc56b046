import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

describe('approvals.ttlMs in config', () => {
  it('sets how long an approval stays open', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } }, approvals: { ttlMs: 45_000 } });
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'a.txt', content: 'x' } }],
          },
        },
      ],
    });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('worker', 'nightly', 'write it');
    const approval = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.getByCall(`${runId}:c1`),
      10_000,
      'the approval',
    );
    expect(approval.status).toBe('pending');
    expect(approval.expiresAt - approval.createdAt).toBe(45_000);
  });
});
