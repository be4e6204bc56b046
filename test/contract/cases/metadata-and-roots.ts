/** Tools without valid metadata, read-only roots (tests 4–5). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { callStep, denied, finalStep, result } from '../script.ts';
import { approvalsOf, auditOf, decide, denyWithReason, waitForApproval } from '../state.ts';
import { completed, scripted, started, type ContractCase } from './case.ts';

export const case04: ContractCase = {
  n: 4,
  title: 'unknown and unannotated tools require approval',
  group: 'main',
  note: {},
  agents: () => [
    {
      id: 'c4',
      mode: 'allow',
      text: 'use the extension',
      model: scripted([
        callStep('c4a', 'ext_unannotated', { x: 1 }),
        callStep('c4b', 'ext_invalid', {}, denied('approval_denied')),
        callStep('c4c', 'no_such_tool', {}, denied('approval_denied')),
        finalStep('c4 done', denied('tool_not_found')),
      ]),
    },
  ],
  async run(ctx) {
    const { folder } = ctx.fx;
    const runId = await ctx.rt.trigger('c4');
    const first = await waitForApproval(folder.stateDir, runId, 1);
    expect(first).toMatchObject({ tool: 'ext_unannotated', reason: 'unannotated_tool' });
    // Never eligible for a standing or session grant, even in `allow`.
    for (const scope of ['always', 'session'] as const) {
      const r = await decide(ctx.rt, first.id, { decision: 'approve', scope });
      expect(r.status, scope).toBe(400);
      expect((r.json() as { error: { code: string } }).error.code).toBe('grant_not_eligible');
    }
    expect(approvalsOf(folder.stateDir, runId)[0]?.status).toBe('pending');
    await denyWithReason(ctx.rt, first.id);
    const second = await waitForApproval(folder.stateDir, runId, 2);
    expect(second).toMatchObject({ tool: 'ext_invalid', reason: 'invalid_metadata' });
    await denyWithReason(ctx.rt, second.id);
    await completed(ctx, runId, 'c4 done');
    // A tool nobody declared is stricter still: denied (tool_not_found), nothing to approve.
    expect(approvalsOf(folder.stateDir, runId)).toHaveLength(2);
    expect(started(folder.stateDir, runId)).toEqual([]);
  },
};

export const case05: ContractCase = {
  n: 5,
  title: 'read-only roots reject writes without offering an override',
  group: 'main',
  agents: ({ folder }) => [
    {
      id: 'c5',
      mode: 'allow',
      text: 'edit the docs',
      model: scripted([
        callStep('c5a', 'write_file', { path: join(folder.docs, 'c5.txt'), content: 'x' }),
        callStep(
          'c5b',
          'edit_file',
          { path: join(folder.docs, 'guide.md'), old: 'a guide', new: 'changed' },
          denied('read_only_root'),
        ),
        callStep('c5c', 'read_file', { path: join(folder.docs, 'guide.md') }, denied('read_only_root')),
        finalStep('c5 done', { ...result('read_file'), contains: 'a guide' }),
      ]),
    },
  ],
  async run(ctx) {
    const { folder } = ctx.fx;
    const runId = await ctx.rt.trigger('c5');
    await completed(ctx, runId, 'c5 done');
    expect(approvalsOf(folder.stateDir, runId)).toEqual([]);
    const decided = auditOf(folder.stateDir, runId).filter(
      (e) => e.kind === 'policy_decided' && (e.tool === 'write_file' || e.tool === 'edit_file'),
    );
    expect(decided).toHaveLength(2);
    for (const e of decided) expect(JSON.stringify(e.detail)).toMatch(/"humanRequired":false/);
    expect(existsSync(join(folder.docs, 'c5.txt'))).toBe(false);
    expect(readFileSync(join(folder.docs, 'guide.md'), 'utf8')).toBe('a guide\n');
    // The benign look-alike: reading the read-only root works.
    expect(started(folder.stateDir, runId).map((e) => e.tool)).toEqual(['read_file']);
  },
};
