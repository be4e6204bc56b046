/** Parking, resuming once, standing approvals (tests 7–9). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { eventually } from '../../support/runtime.ts';
import { callStep, denied, finalStep, result } from '../script.ts';
import {
  approvalsOf,
  approveOnce,
  auditOf,
  decide,
  denyWithReason,
  readState,
  runs,
  waitForApproval,
  waitForStatus,
} from '../state.ts';
import type { SurfaceName } from '../drivers/types.ts';
import { completed, scripted, started, type ContractCase } from './case.ts';

export const case07: ContractCase = {
  n: 7,
  title: 'an unattended approval parks and survives a restart',
  group: 'restart',
  note: { chat: 'attended: the approval waits live, then parks durably across the restart' },
  agents: () => [
    {
      id: 'c7',
      mode: 'ask',
      text: 'write seven',
      model: scripted([
        callStep('c7a', 'write_file', { path: 'c7.txt', content: 'seven' }),
        finalStep('c7 done', result('write_file')),
      ]),
    },
  ],
  async run(ctx) {
    const { folder } = ctx.fx;
    const runId = await ctx.rt.trigger('c7');
    const a = await waitForApproval(folder.stateDir, runId, 1);
    await waitForStatus(folder.stateDir, runId, ['waiting_for_approval']);
    await ctx.rt.restart();
    expect(approvalsOf(folder.stateDir, runId).map((x) => [x.id, x.status])).toEqual([[a.id, 'pending']]);
    expect(runs(folder.stateDir).find((r) => r.runId === runId)?.status).toBe('waiting_for_approval');
    expect(existsSync(join(folder.project, 'c7.txt'))).toBe(false);
    if (ctx.driver.surface === 'goal') {
      // The goal machine came back where it was: still on its first iteration, parked, no new run.
      expect(readState(folder.stateDir, (s) => s.goals.get('goal-c7'))).toMatchObject({
        status: 'active',
        parked: true,
        iteration: 1,
      });
    }
    await approveOnce(ctx.rt, a.id);
    await completed(ctx, runId, 'c7 done');
    expect(readFileSync(join(folder.project, 'c7.txt'), 'utf8')).toBe('seven');
    expect(started(folder.stateDir, runId)).toHaveLength(1);
  },
};

export const case08: ContractCase = {
  n: 8,
  title: 'resume executes an approved call once',
  group: 'restart',
  agents: ({ http }) => [
    {
      id: 'c8',
      mode: 'ask',
      text: 'post once',
      model: scripted([
        callStep('c8a', 'http_request', { url: http.url('/c8'), method: 'POST', body: 'once' }),
        finalStep('c8 done', result('http_request')),
      ]),
    },
  ],
  async run(ctx) {
    const { folder, http } = ctx.fx;
    const runId = await ctx.rt.trigger('c8');
    const a = await waitForApproval(folder.stateDir, runId, 1);
    // Two decisions race: one wins, the other changes nothing and says so.
    const [x, y] = await Promise.all([
      decide(ctx.rt, a.id, { decision: 'approve' }),
      decide(ctx.rt, a.id, { decision: 'approve' }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 409]);
    const done = await completed(ctx, runId, 'c8 done');
    expect(http.hits('/c8')).toBe(1);
    await ctx.rt.restart();
    const again = await decide(ctx.rt, a.id, { decision: 'approve' });
    expect(again.status).toBe(409);
    // What the surface did at the run's end holds after the restart too (no second iteration, no second answer).
    if (done.outcome !== null) await ctx.rt.settled?.(runId, done.outcome);
    expect(http.hits('/c8')).toBe(1);
    expect(started(folder.stateDir, runId)).toHaveLength(1);
    expect(runs(folder.stateDir).find((r) => r.runId === runId)?.status).toBe('completed');
  },
};

/** Surfaces whose runs belong to no task, so no standing approval can be given on them. */
const TASKLESS: readonly SurfaceName[] = ['chat', 'platform'];

export const case09: ContractCase = {
  n: 9,
  title: 'a standing approval matches only its exact target',
  group: 'main',
  note: {
    chat: 'a chat run belongs to no task and standing approvals are owned by tasks: "always" is refused (grant_not_eligible), the next call to the same target asks again',
    subagent:
      'the grant is given on a first child of the task; a child spawned after it inherits it (a running child’s envelope is fixed at its spawn)',
    goal: 'the goal’s runs belong to task `goal:<id>`: the grant holds for that goal’s runs',
    platform:
      'a platform message’s run belongs to no task (a remote chat may not earn standing grants): "always" is refused (grant_not_eligible), the same target asks again',
  },
  agents: ({ http }, surface) => {
    const a = http.url('/c9-a');
    const get = (url: string) => ({ url, method: 'GET' });
    if (TASKLESS.includes(surface)) {
      return [
        {
          id: 'c9',
          mode: 'ask',
          text: 'call the api',
          model: scripted([
            callStep('c9a', 'http_request', get(a)),
            callStep('c9b', 'http_request', get(a), result('http_request')),
            finalStep('c9 done', denied('approval_denied')),
          ]),
        },
      ];
    }
    const rest = [
      callStep('c9c', 'http_request', get(http.url('/c9-b')), result('http_request')),
      callStep('c9d', 'http_request', get(http.url('/c9-a/x')), result('http_request')),
      callStep('c9e', 'http_request', get(`${a}?q=1`), denied('approval_denied')),
      finalStep('c9 done', denied('approval_denied')),
    ];
    if (surface === 'subagent') {
      return [
        {
          id: 'c9-first',
          mode: 'ask',
          text: null,
          model: scripted([
            callStep('c9a', 'http_request', get(a)),
            finalStep('first done', result('http_request')),
          ]),
        },
        {
          id: 'c9',
          mode: 'ask',
          text: 'call the api',
          delegation: { before: ['c9-first'] },
          model: scripted([callStep('c9b', 'http_request', get(a)), ...rest]),
        },
      ];
    }
    return [
      {
        id: 'c9',
        mode: 'ask',
        text: 'call the api',
        model: scripted([
          callStep('c9a', 'http_request', get(a)),
          callStep('c9b', 'http_request', get(a), result('http_request')),
          ...rest,
        ]),
      },
    ];
  },
  async run(ctx) {
    const { folder, http } = ctx.fx;
    const surface = ctx.driver.surface;
    const grantOn =
      surface === 'subagent'
        ? (
            await eventually(
              () => runs(folder.stateDir).find((r) => r.agentId === 'c9-first'),
              60_000,
              'the first child',
            )
          ).runId
        : await ctx.rt.trigger('c9');
    const first = await waitForApproval(folder.stateDir, grantOn, 1);
    const always = await decide(ctx.rt, first.id, { decision: 'approve', scope: 'always' });
    if (TASKLESS.includes(surface)) {
      expect(always.status).toBe(400);
      expect((always.json() as { error: { code: string } }).error.code).toBe('grant_not_eligible');
      await approveOnce(ctx.rt, first.id);
      const second = await waitForApproval(folder.stateDir, grantOn, 2);
      expect(second.tool).toBe('http_request');
      await denyWithReason(ctx.rt, second.id);
      await completed(ctx, grantOn, 'c9 done');
      expect(http.hits('/c9-a')).toBe(1);
      return;
    }
    expect(always.status).toBe(200);
    let runId = grantOn;
    let next = 2;
    if (surface === 'subagent') {
      await completed(ctx, grantOn, 'first done');
      runId = await ctx.rt.trigger('c9');
      next = 1;
    }
    // The exact target again: no approval asked. Other targets (and look-alikes) ask.
    const b = await waitForApproval(folder.stateDir, runId, next);
    expect(b.target).toBe(http.url('/c9-b'));
    expect(http.hits('/c9-a')).toBe(2);
    await approveOnce(ctx.rt, b.id);
    for (const [i, target] of [http.url('/c9-a/x'), `${http.url('/c9-a')}?q=1`].entries()) {
      const x = await waitForApproval(folder.stateDir, runId, next + 1 + i);
      expect(x.target).toBe(target);
      await denyWithReason(ctx.rt, x.id);
    }
    await completed(ctx, runId, 'c9 done');
    expect(http.hits('/c9-a')).toBe(2);
    expect(http.hits('/c9-b')).toBe(1);
    expect(http.hits('/c9-a/x') + http.hits('/c9-a?q=1')).toBe(0);
    // The one call the grant allowed, on its exact target.
    const standing = auditOf(folder.stateDir, runId).filter(
      (e) => e.kind === 'policy_decided' && JSON.stringify(e.detail).includes('standing_approval'),
    );
    expect(standing.map((e) => e.resource)).toEqual([http.url('/c9-a')]);
  },
};
