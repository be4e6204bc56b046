/**
 * Rewind through the sidecar (issue 38), on one real runtime with its sandbox: `GET
 * /v1/runs/:id/checkpoints` lists a run's checkpoints with what changed since; `POST
 * /v1/runs/:id/rewind` shows the diff first (`dryRun`), is refused with 409
 * `rewind_blocked_by_run` naming the run while a live run waits for a human with the root
 * writable, then restores the shell call's edit, delete and create exactly, audited `rewind`
 * through the sidecar as its user, and is undone through the undo checkpoint listed with the run.
 * Bad requests (no token, no JSON, a bad body, another run's or a malformed checkpoint) are clear
 * errors that change nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { startSidecar, type Sidecar } from '../../surfaces/sidecar/server.ts';
import { call } from '../sidecar/client.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { treeOf } from './support.ts';

const TOKEN = 'R'.repeat(16) + 'abcdefghijklmnopqrstuvwxyz012345';
const auth = { Authorization: `Bearer ${TOKEN}` };
const post = { ...auth, 'Content-Type': 'application/json' };

let fx: RuntimeFixture;
let rt: Runtime;
let sidecar: Sidecar;
let runId = '';
let initial: Record<string, string>;
let afterRun: Record<string, string>;

const calls = (id: string, tool: string, args: unknown) => ({
  kind: 'calls' as const,
  calls: [{ id, tool, args }],
});

beforeAll(async () => {
  fx = runtimeFixture({
    agents: {
      editor: { mode: 'allow' },
      asker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 600_000 } },
    },
  });
  const p = fx.project;
  writeFileSync(join(p, 'a.txt'), 'one\ntwo\n');
  writeFileSync(join(p, 'b.txt'), 'delete me\n');
  initial = treeOf(p);
  const model = new ScriptedModel({
    editor: [
      {
        respond: calls('s1', 'shell', {
          command: 'sed -i s/one/ONE/ a.txt && rm b.txt && echo new > c.txt',
          cwd: p,
        }),
      },
      { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'edited' } },
    ],
    asker: [
      { respond: calls('w1', 'write_file', { path: join(p, 'x.txt'), content: 'x' }) },
      { respond: { kind: 'final', text: 'asked' } },
    ],
  });
  rt = await fx.start(model);
  sidecar = await startSidecar({ runtime: rt, token: TOKEN, port: 0, allowedOrigins: [] });
  const result = await rt.chat('editor', 'edit things');
  expect(result.outcome).toMatchObject({ status: 'completed', text: 'edited' });
  runId = result.runId;
  afterRun = treeOf(p);
}, 120_000);

afterAll(async () => {
  await sidecar?.close();
  await rt?.stop();
  fx?.cleanup();
});

const checkpointsOf = async (run: string) => {
  const r = await call(sidecar.port, 'GET', `/v1/runs/${encodeURIComponent(run)}/checkpoints`, {
    headers: auth,
  });
  expect(r.status, r.text).toBe(200);
  return (
    r.json() as {
      checkpoints: { id: string; tool: string; callId: string | null; changedSince: unknown[] }[];
    }
  ).checkpoints;
};
const rewind = (run: string, body: unknown, headers: Record<string, string> = post) =>
  call(sidecar.port, 'POST', `/v1/runs/${encodeURIComponent(run)}/rewind`, {
    headers,
    body: JSON.stringify(body),
  });

describe('rewind through the sidecar', () => {
  it('lists the run’s checkpoint with what changed since; needs the token; an unknown run is 404', async () => {
    const list = await checkpointsOf(runId);
    expect(list.map((c) => [c.tool, c.callId])).toEqual([['shell', 's1']]);
    expect(list[0]?.changedSince).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'a.txt', change: 'modified' }),
        expect.objectContaining({ path: 'b.txt', change: 'deleted' }),
        expect.objectContaining({ path: 'c.txt', change: 'created' }),
      ]),
    );
    const noToken = await call(sidecar.port, 'GET', `/v1/runs/${encodeURIComponent(runId)}/checkpoints`);
    expect(noToken.status).toBe(401);
    const unknown = await call(sidecar.port, 'GET', '/v1/runs/editor%3Arun-nope/checkpoints', {
      headers: auth,
    });
    expect(unknown.status).toBe(404);
  });

  it('bad requests are clear errors and change nothing', async () => {
    const [ck] = await checkpointsOf(runId);
    const id = String(ck?.id);
    expect((await rewind(runId, { checkpoint: id, dryRun: false }, auth)).status).toBe(415);
    expect(
      (await rewind(runId, { checkpoint: id, dryRun: false }, { 'Content-Type': 'application/json' })).status,
    ).toBe(401);
    const noFlag = await rewind(runId, { checkpoint: id });
    expect(noFlag.status).toBe(400);
    expect(noFlag.json()).toMatchObject({ error: { code: 'invalid_body' } });
    expect(noFlag.text).toContain('dryRun');
    const path = await rewind(runId, { checkpoint: '../../etc/passwd', dryRun: true });
    expect(path.status).toBe(400);
    expect(path.json()).toMatchObject({ error: { code: 'invalid_checkpoint_id' } });
    const missing = await rewind(runId, { checkpoint: 'ck-00000000-00000000', dryRun: false });
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'checkpoint_not_found' } });
    const otherRun = await rewind('asker:run-other', { checkpoint: id, dryRun: false });
    expect(otherRun.status).toBe(404);
    expect(treeOf(fx.project)).toEqual(afterRun);
  });

  it('diff first; refused while a live run waits with the root writable, naming it; then exact, audited, undoable', async () => {
    const [ck] = await checkpointsOf(runId);
    const id = String(ck?.id);
    const dry = await rewind(runId, { checkpoint: id, dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    const preview = (dry.json() as { rewind: { dryRun: boolean; patches: { diff: string }[]; undo: null } })
      .rewind;
    expect(preview).toMatchObject({ dryRun: true, undo: null });
    expect(preview.patches.map((x) => x.diff).join('\n')).toMatch(/-ONE[\s\S]*\+one/);
    expect(treeOf(fx.project)).toEqual(afterRun);

    // A live run of the same workspace, waiting for a human's approval of its write.
    const asker = await rt.runs.submit('asker', 'write x', { surface: 'sidecar', interaction: 'attended' });
    const approval = await eventually(
      () =>
        runtimeInternals(rt)
          .store.approvals.listPending({})
          .find((a) => a.runId === asker),
      30_000,
      'the asker run’s approval',
    );
    const blocked = await rewind(runId, { checkpoint: id, dryRun: false });
    expect(blocked.status).toBe(409);
    expect(blocked.json()).toMatchObject({ error: { code: 'rewind_blocked_by_run' } });
    expect(blocked.text).toContain(`run ${asker} is waiting for a human`);
    expect(treeOf(fx.project)).toEqual(afterRun);
    expect((await rewind(runId, { checkpoint: id, dryRun: true })).status).toBe(200);

    await rt.approvals.decideAsync(approval.id, 'denied', 'local:test', 'not now');
    expect(await rt.waitForRun(asker)).toMatchObject({ status: 'completed' });
    const done = await rewind(runId, { checkpoint: id, dryRun: false });
    expect(done.status, done.text).toBe(200);
    const report = (done.json() as { rewind: { undo: string; user: string } }).rewind;
    expect(report.user).toMatch(/^sidecar:/);
    expect(treeOf(fx.project)).toEqual(initial);
    const events = runtimeInternals(rt)
      .store.audit.list()
      .filter((e) => e.kind === 'rewind');
    expect(events).toEqual([
      expect.objectContaining({ runId, callId: 's1', surface: 'sidecar', status: 'restored' }),
    ]);
    expect(events[0]?.detail).toMatchObject({ checkpoint: id, undo: report.undo, by: report.user });

    const listed = await checkpointsOf(runId);
    expect(listed.map((c) => [c.id, c.tool])).toEqual([
      [id, 'shell'],
      [report.undo, 'rewind'],
    ]);
    const undo = await rewind(runId, { checkpoint: report.undo, dryRun: false });
    expect(undo.status, undo.text).toBe(200);
    expect(treeOf(fx.project)).toEqual(afterRun);
  });
});
