/** A child within its parent (test 6). */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { eventually } from '../../support/runtime.ts';
import type { CaseAgent } from '../drivers/types.ts';
import { callStep, denied, finalStep, result } from '../script.ts';
import { approvalsOf, auditOf, denyWithReason, runs, waitForApproval } from '../state.ts';
import { completed, scripted, started, type ContractCase } from './case.ts';

export const case06: ContractCase = {
  n: 6,
  title: 'a child cannot exceed parent mode, roots or tool set',
  group: 'main',
  note: {
    subagent:
      'the surface’s own parent (mode `ask`, three tools) delegates to the case agent and asks for more; a child never delegates further unless asked for explicitly',
  },
  agents: ({ folder }, surface) => {
    const request = {
      mode: 'allow',
      tools: ['read_file', 'write_file', 'shell', 'http_request'],
      roots: [
        { path: folder.outside, access: 'read-write' },
        { path: folder.docs, access: 'read-write' },
        { path: folder.project, access: 'read-write' },
      ],
    };
    const parentTools = ['read_file', 'write_file', 'spawn_agent'];
    const child: CaseAgent = {
      id: 'c6-child',
      mode: 'allow',
      text: surface === 'subagent' ? 'do more than I may' : null,
      ...(surface === 'subagent' ? { delegation: { parentMode: 'ask', parentTools, request } } : {}),
      model: scripted([
        callStep('g1', 'shell', { command: 'echo child > child.txt' }),
        callStep('g2', 'write_file', { path: join(folder.outside, 'c6.txt'), content: 'x' }, denied()),
        callStep('g3', 'write_file', { path: join(folder.docs, 'c6.txt'), content: 'x' }, denied()),
        callStep('g4', 'write_file', { path: join(folder.project, 'c6.txt'), content: 'x' }, denied()),
        finalStep('child done', denied('approval_denied')),
      ]),
    };
    if (surface === 'subagent') return [child];
    return [
      {
        id: 'c6',
        mode: 'ask',
        tools: parentTools,
        text: 'delegate',
        model: scripted([
          callStep('c6a', 'spawn_agent', { profile: 'c6-child', task: 'do more than I may', ...request }),
          finalStep('c6 done', result('spawn_agent')),
        ]),
      },
      child,
    ];
  },
  async run(ctx) {
    const { folder } = ctx.fx;
    let parentRunId: string;
    let childRunId: string;
    if (ctx.driver.surface === 'subagent') {
      childRunId = await ctx.rt.trigger('c6-child');
      parentRunId = runs(folder.stateDir).find((r) => r.runId === childRunId)?.parentRunId as string;
    } else {
      parentRunId = await ctx.rt.trigger('c6');
      childRunId = (
        await eventually(
          () => runs(folder.stateDir).find((r) => r.parentRunId === parentRunId && r.agentId === 'c6-child'),
          60_000,
          'the child run',
        )
      ).runId;
    }
    // The child asked for `allow`; under an `ask` parent its project write still needs a human.
    const a = await waitForApproval(folder.stateDir, childRunId, 1);
    expect(a).toMatchObject({ tool: 'write_file', reason: 'mode_ask' });
    await denyWithReason(ctx.rt, a.id);
    await completed(ctx, childRunId, 'child done');
    await completed(ctx, parentRunId);
    expect(started(folder.stateDir, childRunId)).toEqual([]);
    expect(approvalsOf(folder.stateDir, childRunId)).toHaveLength(1);
    const spawned = auditOf(folder.stateDir, childRunId).find((e) => e.kind === 'agent_spawned');
    const granted = (
      spawned?.detail as {
        granted: { mode: string; tools: string[]; roots: { path: string; access: string }[] };
      }
    ).granted;
    expect(granted.mode).toBe('ask');
    expect(granted.tools).not.toContain('shell');
    expect(granted.tools).not.toContain('http_request');
    expect(granted.roots.map((r) => r.path)).not.toContain(folder.outside);
    expect(granted.roots.find((r) => r.path === folder.docs)?.access ?? 'read').toBe('read');
    expect(readdirSync(folder.outside)).toEqual([]);
    expect(existsSync(join(folder.docs, 'c6.txt'))).toBe(false);
    expect(existsSync(join(folder.project, 'child.txt'))).toBe(false);
  },
};
