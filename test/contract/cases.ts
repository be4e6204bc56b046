import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { call } from '../sidecar/client.ts';
import { assertLifecycles } from '../support/lifecycle.ts';
import { eventually } from '../support/runtime.ts';
import type {
  CaseAgent,
  CaseModel,
  ScriptStep,
  SurfaceDriver,
  SurfaceName,
  SurfaceRuntime,
} from './drivers/types.ts';
import { CONTRACT_SECRET, SECRET_NAME, type GroupFixture } from './fixture.ts';
import { callStep, denied, finalStep, result } from './script.ts';
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
} from './state.ts';
import { closesItsTree } from './tree.ts';

/** What a case gets: its surface's driver and runtime, the group's files and servers. */
export interface CaseContext {
  readonly driver: SurfaceDriver;
  readonly rt: SurfaceRuntime;
  readonly fx: GroupFixture;
}

/** Which runtime a case shares: `main` (no restart), `restart` (tests 7, 8), `tree` (test 12 closes it). */
export type Group = 'main' | 'restart' | 'tree';

/** One of the seed's twelve contract tests, written once for every surface. */
export interface ContractCase {
  readonly n: number;
  readonly title: string;
  readonly group: Group;
  /** The agents the case needs (the same for every surface unless the surface changes what applies). */
  agents(fx: GroupFixture, surface: SurfaceName): CaseAgent[];
  /** How the case applies to a surface where it differs (shown in the README table). */
  readonly note?: Partial<Record<SurfaceName, string>>;
  run(ctx: CaseContext): Promise<void>;
}

const scripted = (steps: ScriptStep[]): CaseModel => ({ kind: 'scripted', steps });

function started(stateDir: string, runId: string, tool?: string) {
  return auditOf(stateDir, runId).filter(
    (e) => e.kind === 'started' && (tool === undefined || e.tool === tool),
  );
}

async function completed(ctx: CaseContext, runId: string, text?: string) {
  const run = await waitForStatus(ctx.fx.folder.stateDir, runId, ['completed', 'failed', 'denied']);
  expect(run.status, `run ${runId}: ${JSON.stringify(run.outcome)}`).toBe('completed');
  if (text !== undefined) expect(run.outcome?.text).toBe(text);
  readState(ctx.fx.folder.stateDir, (s) => assertLifecycles(s, runId));
  return run;
}

/** The seed's §13 matrix, in its order. */
export const CASES: readonly ContractCase[] = [
  {
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
          callStep(
            'c1c',
            'write_file',
            { path: 'escape/c1-link.txt', content: 'x' },
            denied('outside_roots'),
          ),
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
  },
  {
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
  },
  {
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
  },
  {
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
  },
  {
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
  },
  {
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
            () =>
              runs(folder.stateDir).find((r) => r.parentRunId === parentRunId && r.agentId === 'c6-child'),
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
  },
  {
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
      await approveOnce(ctx.rt, a.id);
      await completed(ctx, runId, 'c7 done');
      expect(readFileSync(join(folder.project, 'c7.txt'), 'utf8')).toBe('seven');
      expect(started(folder.stateDir, runId)).toHaveLength(1);
    },
  },
  {
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
      await completed(ctx, runId, 'c8 done');
      expect(http.hits('/c8')).toBe(1);
      await ctx.rt.restart();
      const again = await decide(ctx.rt, a.id, { decision: 'approve' });
      expect(again.status).toBe(409);
      expect(http.hits('/c8')).toBe(1);
      expect(started(folder.stateDir, runId)).toHaveLength(1);
      expect(runs(folder.stateDir).find((r) => r.runId === runId)?.status).toBe('completed');
    },
  },
  {
    n: 9,
    title: 'a standing approval matches only its exact target',
    group: 'main',
    note: {
      chat: 'a chat run belongs to no task and standing approvals are owned by tasks: "always" is refused (grant_not_eligible), the next call to the same target asks again',
      subagent:
        'the grant is given on a first child of the task; a child spawned after it inherits it (a running child’s envelope is fixed at its spawn)',
    },
    agents: ({ http }, surface) => {
      const a = http.url('/c9-a');
      const get = (url: string) => ({ url, method: 'GET' });
      if (surface === 'chat') {
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
      if (surface === 'chat') {
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
  },
  {
    n: 10,
    title: 'unauthorized browser-origin and missing-token sidecar requests fail',
    group: 'main',
    note: {
      chat: 'the chat entry itself (POST /v1/chat/:agent/messages) and the routes that decide and read its runs',
      scheduled:
        'the routes that reach its runs: the Inbox decision and run reads (the scheduler has no HTTP entry)',
      subagent: 'the routes that reach the child run: its Inbox decision and run reads',
      mcp: 'the MCP entry is stdio (no HTTP); the sidecar of the runtime `snotra mcp` started: decision and run reads',
    },
    agents: () => [
      {
        id: 'c10',
        mode: 'ask',
        text: 'write ten',
        model: scripted([
          callStep('c10a', 'write_file', { path: 'c10.txt', content: 'ten' }),
          finalStep('c10 done', denied('approval_denied')),
        ]),
      },
    ],
    async run(ctx) {
      const { folder } = ctx.fx;
      const runId = await ctx.rt.trigger('c10');
      const a = await waitForApproval(folder.stateDir, runId, 1);
      const { port, token } = ctx.rt.sidecar();
      const auth = { Authorization: `Bearer ${token}` };
      const json = { 'Content-Type': 'application/json' };
      const approve = JSON.stringify({ decision: 'approve' });
      const decision = `/v1/inbox/${encodeURIComponent(a.id)}/decision`;
      const attempts: [string, string, Record<string, string>, number][] = [
        ['POST', decision, json, 401],
        ['POST', decision, { ...json, Authorization: `Bearer ${'x'.repeat(token.length)}` }, 401],
        ['POST', decision, { ...json, ...auth, Origin: 'http://evil.example' }, 403],
        ['POST', decision, { ...json, ...auth, Origin: 'null' }, 403],
        ['POST', decision, { ...json, ...auth, Origin: `http://localhost.evil.example:${port}` }, 403],
        ['POST', decision, { ...json, ...auth, Host: `evil.example:${port}` }, 403],
        ['GET', `/v1/runs/${encodeURIComponent(runId)}`, {}, 401],
        [
          'GET',
          `/v1/runs/${encodeURIComponent(runId)}/audit`,
          { ...auth, Origin: 'http://evil.example' },
          403,
        ],
        ['GET', '/v1/inbox', {}, 401],
        ['GET', '/v1/events', {}, 401],
      ];
      if (ctx.driver.surface === 'chat') {
        const chat = '/v1/chat/c10/messages';
        const body = JSON.stringify({ text: 'write ten again' });
        attempts.push(
          ['POST', chat, json, 401],
          ['POST', chat, { ...json, ...auth, Origin: 'http://evil.example' }, 403],
        );
        for (const [method, path, headers, status] of attempts) {
          const r = await call(port, method, path, {
            headers,
            body: method === 'POST' ? (path === chat ? body : approve) : undefined,
          });
          expect(r.status, `${method} ${path} ${Object.keys(headers).join(',')}`).toBe(status);
          expect(r.text).not.toContain(token);
        }
      } else {
        for (const [method, path, headers, status] of attempts) {
          const r = await call(port, method, path, {
            headers,
            ...(method === 'POST' ? { body: approve } : {}),
          });
          expect(r.status, `${method} ${path} ${Object.keys(headers).join(',')}`).toBe(status);
          expect(r.text).not.toContain(token);
        }
      }
      // Nothing was decided, nothing ran, no second run started.
      expect(approvalsOf(folder.stateDir, runId).map((x) => x.status)).toEqual(['pending']);
      expect(existsSync(join(folder.project, 'c10.txt'))).toBe(false);
      expect(runs(folder.stateDir).filter((r) => r.agentId === 'c10')).toHaveLength(1);
      // The benign look-alike: the launcher's token (no Origin, or the sidecar's own) decides.
      const own = await call(port, 'GET', `/v1/runs/${encodeURIComponent(runId)}`, {
        headers: { ...auth, Origin: `http://127.0.0.1:${port}` },
      });
      expect(own.status).toBe(200);
      await denyWithReason(ctx.rt, a.id);
      await completed(ctx, runId, 'c10 done');
    },
  },
  {
    n: 11,
    title: 'audit output contains no configured secret',
    group: 'main',
    agents: ({ model }) => [
      {
        id: 'c11',
        mode: 'allow',
        text: 'use the api',
        model: { kind: 'openai-compatible', baseUrl: model.url, apiKeySecret: SECRET_NAME },
      },
    ],
    async run(ctx) {
      const { folder, model } = ctx.fx;
      const runId = await ctx.rt.trigger('c11');
      const run = await completed(ctx, runId);
      // The secret was configured and used: the provider got it (and echoed it into the run).
      expect(model.requests.some((r) => r.headers.authorization === `Bearer ${CONTRACT_SECRET}`)).toBe(true);
      expect(run.outcome?.text).toContain('done; the key was');
      expect(JSON.stringify(run.outcome)).not.toContain(CONTRACT_SECRET);
      const audit = JSON.stringify(auditOf(folder.stateDir, runId));
      expect(audit).toContain('write_file');
      expect(audit).not.toContain(CONTRACT_SECRET);
      const cli = readState(folder.stateDir, (s) => JSON.stringify([...s.audit.iterate({})])) ?? '';
      expect(cli.length).toBeGreaterThan(0);
      expect(cli).not.toContain(CONTRACT_SECRET);
      expect(ctx.rt.logs()).not.toContain(CONTRACT_SECRET);
      for (const f of readdirSync(folder.stateDir)) {
        const p = join(folder.stateDir, f);
        if (f.endsWith('.sock') || !existsSync(p)) continue;
        try {
          expect(readFileSync(p).includes(Buffer.from(CONTRACT_SECRET)), f).toBe(false);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
        }
      }
    },
  },
  {
    n: 12,
    title: 'closing the desktop process terminates its managed process tree',
    group: 'tree',
    note: {
      chat: 'SIGTERM to `snotra start` (what the desktop shell sends on close)',
      scheduled: 'SIGTERM to `snotra start` (what the desktop shell sends on close)',
      subagent: 'SIGTERM to `snotra start`; the shell runs in the child run',
      mcp: 'the MCP client closes (stdin ends, as when Claude Desktop quits)',
    },
    agents: () => [
      {
        id: 'c12',
        mode: 'allow',
        text: 'sleep',
        model: scripted([callStep('c12a', 'shell', { command: "sh -c 'sleep 300 & sleep 300'" })]),
      },
    ],
    async run(ctx) {
      await ctx.rt.trigger('c12');
      await closesItsTree(ctx.rt);
    },
  },
];

/** The config every group shares: extension tools without valid metadata, the hit server, the env secret. */
export function sharedConfig(fx: GroupFixture): Record<string, unknown> {
  return {
    tools: {
      ext_unannotated: { source: 'extension' },
      ext_invalid: { source: 'extension', risk: 'superuser' },
    },
    http: { allowPrivateHosts: [fx.http.hostPort] },
    secrets: { backend: 'env' },
  };
}

export const SHARED_ENV: Readonly<Record<string, string>> = { SNOTRA_SECRET_API_TOKEN: CONTRACT_SECRET };
