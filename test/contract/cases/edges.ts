/** The sidecar, secrets, the process tree (tests 10–12). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { call } from '../../sidecar/client.ts';
import { CONTRACT_SECRET, SECRET_NAME } from '../fixture.ts';
import { callStep, denied, finalStep } from '../script.ts';
import { approvalsOf, auditOf, denyWithReason, readState, runs, waitForApproval } from '../state.ts';
import { closesItsTree } from '../tree.ts';
import { completed, scripted, type ContractCase } from './case.ts';
import { withDecodedRows } from '../../support/stored-bytes.ts';

export const case10: ContractCase = {
  n: 10,
  title: 'unauthorized browser-origin and missing-token sidecar requests fail',
  group: 'main',
  note: {
    chat: 'the chat entry itself (POST /v1/chat/:agent/messages) and the routes that decide and read its runs',
    scheduled:
      'the routes that reach its runs: the Inbox decision and run reads (the scheduler has no HTTP entry)',
    subagent: 'the routes that reach the child run: its Inbox decision and run reads',
    mcp: 'the MCP entry is stdio (no HTTP); the sidecar of the runtime `snotra mcp` started: decision and run reads',
    goal: 'the goal routes (`GET /v1/goals`, `POST /v1/goals/:id/start|pause|cancel`) besides the decision and run reads; the goal stays active and parked',
    platform:
      'the entry is the Bot API long poll (no sidecar route): the decision and run reads, and an unpaired chat asking the bot to approve gets pairing instructions only',
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
      ['GET', `/v1/runs/${encodeURIComponent(runId)}/audit`, { ...auth, Origin: 'http://evil.example' }, 403],
      ['GET', '/v1/inbox', {}, 401],
      ['GET', '/v1/events', {}, 401],
    ];
    const chat = '/v1/chat/c10/messages';
    const bodies = new Map([[chat, JSON.stringify({ text: 'write ten again' })]]);
    if (ctx.driver.surface === 'chat') {
      attempts.push(
        ['POST', chat, json, 401],
        ['POST', chat, { ...json, ...auth, Origin: 'http://evil.example' }, 403],
      );
    }
    if (ctx.driver.surface === 'goal') {
      for (const action of ['start', 'pause', 'cancel']) bodies.set(`/v1/goals/goal-c10/${action}`, '{}');
      attempts.push(
        ['POST', '/v1/goals/goal-c10/pause', json, 401],
        [
          'POST',
          '/v1/goals/goal-c10/cancel',
          { ...json, Authorization: `Bearer ${token.slice(0, -1)}` },
          401,
        ],
        ['POST', '/v1/goals/goal-c10/pause', { ...json, ...auth, Origin: 'http://evil.example' }, 403],
        ['POST', '/v1/goals/goal-c10/cancel', { ...json, ...auth, Origin: 'null' }, 403],
        ['POST', '/v1/goals/goal-c10/start', { ...json, ...auth, Host: `evil.example:${port}` }, 403],
        ['GET', '/v1/goals', {}, 401],
        ['GET', '/v1/goals', { ...auth, Origin: 'http://evil.example' }, 403],
      );
    }
    for (const [method, path, headers, status] of attempts) {
      const r = await call(port, method, path, {
        headers,
        ...(method === 'POST' ? { body: bodies.get(path) ?? approve } : {}),
      });
      expect(r.status, `${method} ${path} ${Object.keys(headers).join(',')}`).toBe(status);
      expect(r.text).not.toContain(token);
    }
    if (ctx.driver.surface === 'goal') {
      // No control was applied and none waits: the goal still works, parked on the approval.
      expect(readState(folder.stateDir, (s) => s.goals.get('goal-c10'))).toMatchObject({
        status: 'active',
        parked: true,
        iteration: 1,
      });
      expect(readState(folder.stateDir, (s) => s.goals.pendingControls().length)).toBe(0);
      // The benign look-alike: with the launcher's token the goal routes answer.
      const list = await call(port, 'GET', '/v1/goals', { headers: auth });
      expect(list.status).toBe(200);
      expect(list.text).toContain('"c10"');
    }
    if (ctx.rt.fromStranger !== undefined) {
      // The remote entry: an unpaired sender asking to approve the request gets pairing instructions only.
      const got = await ctx.rt.fromStranger('c10', `approve ${a.id}, scope always`);
      expect(got).toHaveLength(1);
      expect(got[0]).toContain('snotra platforms pair');
      expect(got[0]).not.toContain(a.id);
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
};

export const case11: ContractCase = {
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
    const secrets = [CONTRACT_SECRET, ...(ctx.rt.secrets?.() ?? [])];
    expect(JSON.stringify(run.outcome)).not.toContain(CONTRACT_SECRET);
    const audit = JSON.stringify(auditOf(folder.stateDir, runId));
    expect(audit).toContain('write_file');
    const cli = readState(folder.stateDir, (s) => JSON.stringify([...s.audit.iterate({})])) ?? '';
    expect(cli.length).toBeGreaterThan(0);
    for (const [i, secret] of secrets.entries()) {
      const which = i === 0 ? 'the model API key' : `surface secret #${i}`;
      expect(audit, which).not.toContain(secret);
      expect(cli, which).not.toContain(secret);
      expect(ctx.rt.logs(), which).not.toContain(secret);
      for (const f of readdirSync(folder.stateDir)) {
        const p = join(folder.stateDir, f);
        if (f.endsWith('.sock') || !existsSync(p)) continue;
        try {
          expect(withDecodedRows(readFileSync(p)).includes(Buffer.from(secret)), `${f}: ${which}`).toBe(
            false,
          );
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
        }
      }
    }
  },
};

export const case12: ContractCase = {
  n: 12,
  title: 'closing the desktop process terminates its managed process tree',
  group: 'tree',
  note: {
    chat: 'SIGTERM to `snotra start` (what the desktop shell sends on close)',
    scheduled: 'SIGTERM to `snotra start` (what the desktop shell sends on close)',
    subagent: 'SIGTERM to `snotra start`; the shell runs in the child run',
    mcp: 'the MCP client closes (stdin ends, as when Claude Desktop quits)',
    goal: 'SIGTERM to the `snotra start` that runs the goal; the shell runs in its iteration',
    platform: 'SIGTERM to the `snotra start` that polls the bot; the shell runs in the message’s run',
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
};
