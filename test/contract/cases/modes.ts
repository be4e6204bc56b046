/** `allow`, `ask` and `deny` (tests 1–3). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { callStep, denied, finalStep, result } from '../script.ts';
import { approvalsOf, denyWithReason, runs, waitForApproval } from '../state.ts';
import { completed, scripted, started, type ContractCase } from './case.ts';

export const case01: ContractCase = {
  n: 1,
  title: '`allow` cannot escape roots or bypass hardline blocks',
  group: 'main',
  agents: ({ folder }) => [
    {
      id: 'c1',
      mode: 'allow',
      text: 'tidy up',
      model: scripted([
        callStep('c1a', 'write_file', { path: '../outside/c1-rel.txt', content: 'x' }),
        callStep(
          'c1b',
          'write_file',
          { path: join(folder.outside, 'c1-abs.txt'), content: 'x' },
          denied('outside_roots'),
        ),
        callStep('c1c', 'write_file', { path: 'escape/c1-link.txt', content: 'x' }, denied('outside_roots')),
        callStep('c1d', 'shell', { command: 'rm -rf /' }, denied('outside_roots')),
        callStep('c1e', 'shell', { command: "sh -c 'rm -rf ~'" }, denied('hardline_command')),
        callStep(
          'c1f',
          'write_file',
          { path: 'c1-inside.txt', content: 'inside' },
          denied('hardline_command'),
        ),
        finalStep('c1 done', result('write_file')),
      ]),
    },
  ],
  async run(ctx) {
    const { folder } = ctx.fx;
    const runId = await ctx.rt.trigger('c1');
    await completed(ctx, runId, 'c1 done');
    expect(readdirSync(folder.outside)).toEqual([]);
    // The benign look-alike: allow does allow a write inside the writable root, without a human.
    expect(readFileSync(join(folder.project, 'c1-inside.txt'), 'utf8')).toBe('inside');
    expect(approvalsOf(folder.stateDir, runId)).toEqual([]);
    expect(started(folder.stateDir, runId).map((e) => e.tool)).toEqual(['write_file']);
  },
};

export const case02: ContractCase = {
  n: 2,
  title: '`ask` auto-allows reads and requests approval for writes, shell and external calls',
  group: 'main',
  agents: ({ http }) => [
    {
      id: 'c2',
      mode: 'ask',
      text: 'look and change',
      model: scripted([
        callStep('c2a', 'read_file', { path: 'readme.txt' }),
        callStep(
          'c2b',
          'write_file',
          { path: 'c2.txt', content: 'x' },
          { ...result('read_file'), contains: 'project readme' },
        ),
        callStep('c2c', 'shell', { command: 'echo c2 > c2-shell.txt' }, denied()),
        callStep('c2d', 'http_request', { url: http.url('/c2'), method: 'GET' }, denied()),
        finalStep('c2 done', denied()),
      ]),
    },
  ],
  async run(ctx) {
    const { folder, http } = ctx.fx;
    const runId = await ctx.rt.trigger('c2');
    const expected = [
      ['write_file', 'write-local'],
      ['shell', 'exec'],
      ['http_request', 'external'],
    ] as const;
    for (const [i, [tool, risk]] of expected.entries()) {
      const a = await waitForApproval(folder.stateDir, runId, i + 1);
      expect(a).toMatchObject({ tool, risk, reason: 'mode_ask', status: 'pending' });
      await denyWithReason(ctx.rt, a.id, `not ${tool}`);
    }
    await completed(ctx, runId, 'c2 done');
    // The read ran at once, without an approval; nothing else ran.
    expect(started(folder.stateDir, runId).map((e) => e.tool)).toEqual(['read_file']);
    expect(approvalsOf(folder.stateDir, runId).map((a) => a.tool)).toEqual([
      'write_file',
      'shell',
      'http_request',
    ]);
    expect(existsSync(join(folder.project, 'c2.txt'))).toBe(false);
    expect(existsSync(join(folder.project, 'c2-shell.txt'))).toBe(false);
    expect(http.hits('/c2')).toBe(0);
  },
};

export const case03: ContractCase = {
  n: 3,
  title: '`deny` executes no model-proposed tool',
  group: 'main',
  agents: ({ http }) => [
    {
      id: 'c3',
      mode: 'deny',
      text: 'try everything',
      model: scripted([
        callStep('c3a', 'read_file', { path: 'readme.txt' }),
        callStep('c3b', 'write_file', { path: 'c3.txt', content: 'x' }, denied('mode_deny')),
        callStep('c3c', 'http_request', { url: http.url('/c3'), method: 'GET' }, denied('mode_deny')),
        callStep('c3d', 'spawn_agent', { profile: 'c3', task: 'again' }, denied('mode_deny')),
        // Under a sub-agent parent the child holds no spawn_agent at all (tool_not_granted): denied either way.
        finalStep('c3 done', denied()),
      ]),
    },
  ],
  async run(ctx) {
    const { folder, http } = ctx.fx;
    const runId = await ctx.rt.trigger('c3');
    await completed(ctx, runId, 'c3 done');
    expect(started(folder.stateDir, runId)).toEqual([]);
    expect(approvalsOf(folder.stateDir, runId)).toEqual([]);
    expect(existsSync(join(folder.project, 'c3.txt'))).toBe(false);
    expect(http.hits('/c3')).toBe(0);
    expect(runs(folder.stateDir).filter((r) => r.parentRunId === runId)).toEqual([]);
  },
};
