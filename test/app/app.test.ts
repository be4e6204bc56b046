import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, configDir, until } from '../sidecar/client.ts';
import { procText, startApp, stillRunning, type RunningApp } from './app-process.ts';

const LOCAL_USER = `sidecar:${userInfo().username}`;
const SHELL_SECRET = `shell-secret-${randomBytes(12).toString('hex')}`;
let dir: string;
let app: RunningApp;
let port: number;
let token: string;
let other: Server;
let otherPort: number;
let firstChatRun: string;
const otherRequests: { url: string; auth: string | undefined }[] = [];

type AuditEvent = {
  kind: string;
  callId?: string | null;
  status?: string | null;
  detail?: Record<string, unknown>;
};

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const a = await call(port, method, path, {
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (a.status >= 300) throw new Error(`${method} ${path}: ${a.status} ${a.text}`);
  return a.json() as T;
}

function readComm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

async function runsOf(agent: string) {
  return (
    await api<{ runs: { runId: string; agentId: string; status: string }[] }>('GET', '/v1/runs')
  ).runs.filter((r) => r.agentId === agent);
}

beforeAll(async () => {
  const fireAt = new Date(Date.now() + 8000).toISOString().replace(/\.\d+Z$/, '');
  dir = configDir(
    {
      agents: {
        assistant: { mode: 'ask', model: { provider: 'scripted', script: 'assistant.json' } },
        worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } },
        careful: { mode: 'ask', model: { provider: 'scripted', script: 'careful.json' } },
      },
      surfaces: {
        scheduled: [
          { id: 'nightly', agent: 'worker', cron: fireAt, message: 'log the night', missed: 'run-once' },
        ],
      },
    },
    {
      assistant: [
        {
          respond: {
            kind: 'calls',
            calls: [
              { id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content: 'hello\nfrom the app\n' } },
            ],
          },
        },
        {
          expect: { kind: 'tool.result', tool: 'write_file' },
          respond: { kind: 'final', text: 'I wrote notes.txt' },
        },
      ],
      // In a chat the denial (with its reason) goes back to the model, which answers.
      careful: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'd1', tool: 'write_file', args: { path: 'plan.txt', content: 'the plan\n' } }],
          },
        },
        {
          expect: { kind: 'tool.denied', tool: 'write_file' },
          respond: { kind: 'final', text: 'understood, I left plan.txt alone' },
        },
      ],
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'w1', tool: 'shell', args: { command: 'echo once >> night.log' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'logged' } },
      ],
    },
  );
  other = createServer((req, res) => {
    otherRequests.push({ url: req.url ?? '', auth: req.headers.authorization });
    res.writeHead(200, { 'Access-Control-Allow-Origin': '*' });
    res.end('other');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherPort = (other.address() as AddressInfo).port;
  // Variables of the user's shell that must not reach the browser (the runtime child gets them).
  app = await startApp(['--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SECRET_APP_DEMO: SHELL_SECRET,
    DEMO_API_KEY: SHELL_SECRET,
  });
  port = Number(new URL(app.ready.sidecar).port);
  // The test reads the token where only a same-user process can: the runtime's launch environment.
  const env = procText(app.ready.runtimePid).environ.split('\0');
  token = (env.find((e) => e.startsWith('SNOTRA_SIDECAR_TOKEN=')) ?? '').slice(
    'SNOTRA_SIDECAR_TOKEN='.length,
  );
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // Waits go through locators: a string predicate (waitForFunction) is eval in the page, which
  // the app's CSP refuses as soon as the first check does not already hold.
  await app.page.locator('[data-testid=feed]', { hasText: /^live$/ }).waitFor({ timeout: 30_000 });
}, 120_000);

afterAll(async () => {
  await app?.browser.close().catch(() => {});
  if (app !== undefined && app.process.child.exitCode === null) {
    app.process.child.kill('SIGTERM');
    await app.process.exited;
  }
  other?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('snotra app --headless: the web app in Chromium, end to end', () => {
  it('the token is nowhere but the runtime’s launch environment: no argv, not Chromium’s env, not the page, not the output', async () => {
    const procs = await app.snapshot();
    expect(procs.length).toBeGreaterThan(3);
    for (const p of procs) {
      const { cmdline, environ } = procText(p.pid);
      expect(cmdline, `cmdline of ${p.pid}`).not.toContain(token);
      if (p.pid !== app.ready.runtimePid) expect(environ, `environ of ${p.pid}`).not.toContain(token);
    }
    expect(procText(app.process.pid).environ).not.toContain('SNOTRA_SIDECAR_TOKEN');
    // Chromium's processes get the child allowlist, not the shell's secrets or keys.
    const browsers = procs.filter((p) => /^chrom/.test(readComm(p.pid)));
    expect(browsers.length).toBeGreaterThan(0);
    // (Chromium's helpers write their title over the environment's memory; the main one keeps it.)
    expect(browsers.some((p) => /(^|\0)PATH=/.test(procText(p.pid).environ))).toBe(true);
    for (const p of browsers) {
      const { environ } = procText(p.pid);
      expect(environ, `environ of ${p.pid}`).not.toContain(SHELL_SECRET);
      expect(environ, `environ of ${p.pid}`).not.toContain('SNOTRA_SECRET_');
    }
    expect(procText(app.ready.runtimePid).environ).toContain(SHELL_SECRET);
    expect(app.process.stdout()).not.toContain(token);
    expect(app.process.stderr()).not.toContain(token);
    expect(app.page.url()).toBe(`${app.ready.sidecar}/`);
    const html = await app.page.content();
    expect(html).not.toContain(token);
    // The page uses the API through the shell without ever holding the token…
    const inbox = (await app.page.evaluate("fetch('/v1/inbox').then((r) => r.status)")) as number;
    expect(inbox).toBe(200);
    // …and it cannot reach another origin at all (CSP and the shell both refuse), so nothing leaks there.
    const outcome = (await app.page.evaluate(
      `fetch('http://127.0.0.1:${otherPort}/x').then(() => 'reached', () => 'blocked')`,
    )) as string;
    expect(outcome).toBe('blocked');
    expect(otherRequests).toEqual([]);
  });

  it('a chat whose call needs approval shows the card; a click approves; the run completes; the audit shows approval_resolved by the local user', async () => {
    const page = app.page;
    await page.click('button[data-tab=chat]');
    await page.waitForSelector('[data-testid=agent] option[value=assistant]', { state: 'attached' });
    await page.selectOption('[data-testid=agent]', 'assistant');
    await page.fill('[data-testid=message]', 'write the notes');
    await page.click('.chat form button[type=submit]');
    const card = page.locator('.chat [data-testid=approval-card]');
    await card.waitFor({ timeout: 30_000 });
    const text = await card.innerText();
    expect(text).toContain('write_file');
    expect(text).toContain('write-local');
    expect(text).toContain('mode_ask');
    expect(text).toContain(join(dir, 'project', 'notes.txt'));
    const diff = await card.locator('[data-testid=diff]').innerText();
    expect(diff).toContain('+hello');
    expect(diff).toContain('+from the app');
    expect(existsSync(join(dir, 'project', 'notes.txt'))).toBe(false);
    // Approved for the rest of this window's session.
    await card.locator('[data-testid=scope]').selectOption('session');
    await card.locator('button.approve').click();
    await page.locator('.chat [data-testid=run-completed]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.chat [data-testid=answer]').last().innerText()).toBe('I wrote notes.txt');
    expect(readFileSync(join(dir, 'project', 'notes.txt'), 'utf8')).toBe('hello\nfrom the app\n');
    const [run] = await runsOf('assistant');
    expect(run?.status).toBe('completed');
    firstChatRun = run!.runId;
    const audit = await api<{ events: AuditEvent[]; verification: { ok: boolean } }>(
      'GET',
      `/v1/runs/${encodeURIComponent(run!.runId)}/audit`,
    );
    const resolved = audit.events.filter((e) => e.kind === 'approval_resolved');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]?.status).toBe('approved');
    expect(resolved[0]?.detail?.decidedBy).toBe(LOCAL_USER);
    expect(audit.verification.ok).toBe(true);
    // The runs view shows the same timeline and the chain's verification.
    await page.click('button[data-tab=runs]');
    await page.locator(`[data-testid=run-list] li[data-key="${run!.runId}"]`).click();
    // Listed by its title (the first message), the conversation first; the timeline is the Audit tab.
    expect(await page.locator(`[data-testid=run-list] li[data-key="${run!.runId}"]`).innerText()).toContain(
      'write the notes',
    );
    await page
      .locator('[data-testid=conversation] [data-testid=decision]', { hasText: 'approved' })
      .waitFor({ timeout: 15_000 });
    await page.click('.run-detail button[data-tab=audit]');
    await page.locator('[data-testid=timeline] li[data-kind=approval_resolved]').waitFor({ timeout: 15_000 });
    expect(
      await page.locator('[data-testid=timeline] li[data-kind=approval_resolved]').innerText(),
    ).toContain(`by ${LOCAL_USER}`);
    expect(await page.locator('[data-testid=verification]').innerText()).toMatch(/verified \(\d+ events\)/);
    // The run machine's graph with the run's state highlighted.
    await page.locator('details.machine-state summary').click();
    expect(await page.locator('[data-testid=run-state]').innerText()).toBe('completed');
    const current = page.locator('details.machine-state [data-testid=machine-graph] .state.current');
    expect(await current.count()).toBe(1);
    expect(await current.getAttribute('data-state')).toBe('run.completed');
  }, 90_000);

  it('the session approval given in the card covers the same write in the next run of this window’s chat: no card, allowed by the session grant', async () => {
    const page = app.page;
    await page.click('button[data-tab=chat]');
    await page.fill('[data-testid=message]', 'write the notes again');
    await page.click('.chat form button[type=submit]');
    const second = await until(
      async () =>
        (await runsOf('assistant')).find((r) => r.status === 'completed' && r.runId !== firstChatRun),
      30_000,
      'the second chat run',
    );
    await page.locator('.chat [data-testid=run-completed]').nth(1).waitFor({ timeout: 15_000 });
    expect(await page.locator('.chat [data-testid=approval-card]').count()).toBe(1);
    const audit = await api<{ events: AuditEvent[] }>(
      'GET',
      `/v1/runs/${encodeURIComponent(second.runId)}/audit`,
    );
    expect(audit.events.some((e) => e.kind === 'approval_requested')).toBe(false);
    expect(audit.events.find((e) => e.kind === 'policy_decided')?.status).toBe('allow');
    expect(audit.events.filter((e) => e.kind === 'completed')).toHaveLength(1);
    const first = await api<{ events: AuditEvent[] }>(
      'GET',
      `/v1/runs/${encodeURIComponent(firstChatRun)}/audit`,
    );
    expect(first.events.some((e) => e.kind === 'session_approval_granted')).toBe(true);
  }, 60_000);

  it('Deny on a chat card, with a reason: the call never runs, the model is told, the audit has the denial by the local user', async () => {
    const page = app.page;
    await page.click('button[data-tab=chat]');
    await page.waitForSelector('[data-testid=agent] option[value=careful]', { state: 'attached' });
    await page.selectOption('[data-testid=agent]', 'careful');
    await page.fill('[data-testid=message]', 'write the plan');
    await page.click('.chat form button[type=submit]');
    // The write_file session approval given to the assistant in this window does not cover
    // another agent: its chat has a session of its own, so this write asks.
    const card = page.locator('.chat [data-testid=approval-card]', { hasText: 'plan.txt' });
    await card.waitFor({ timeout: 30_000 });
    // Approve is not the only way out: the reason goes with the denial.
    await card.locator('input.reason').fill('not this file');
    await card.locator('button.deny').click();
    await card.locator('.status', { hasText: 'denied by you' }).waitFor({ timeout: 15_000 });
    expect(await card.locator('button.approve').count()).toBe(0);
    const run = await until(
      async () => (await runsOf('careful')).find((r) => r.status === 'completed'),
      30_000,
      'the careful run completed',
    );
    await page
      .locator('.chat [data-testid=answer]', { hasText: 'understood, I left plan.txt alone' })
      .waitFor({ timeout: 15_000 });
    expect(await page.locator('.chat .tool-line.denied', { hasText: 'write_file' }).count()).toBe(1);
    expect(existsSync(join(dir, 'project', 'plan.txt'))).toBe(false);
    const audit = await api<{ events: AuditEvent[] }>(
      'GET',
      `/v1/runs/${encodeURIComponent(run.runId)}/audit`,
    );
    const resolved = audit.events.filter((e) => e.kind === 'approval_resolved');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]?.status).toBe('denied');
    expect(resolved[0]?.detail?.decidedBy).toBe(LOCAL_USER);
    expect(resolved[0]?.detail?.decisionReason).toBe('not this file');
    expect(audit.events.some((e) => e.kind === 'started')).toBe(false);
  }, 60_000);

  it('an unattended scheduled run parks, shows in the Inbox with a live badge, is approved from the page and resumes once', async () => {
    const page = app.page;
    const parked = await until(
      async () => (await runsOf('worker')).find((r) => r.status === 'waiting_for_approval'),
      60_000,
      'the parked run',
    );
    await page.locator('[data-testid=inbox-badge]', { hasText: /^1$/ }).waitFor({ timeout: 30_000 });
    // The live actor tree shows the parked run, its budgets and its pending approval under it.
    await page.click('button[data-tab=actors]');
    const runNode = page.locator('[data-testid=actor-tree] button.actor.kind-run.parked', {
      hasText: parked.runId,
    });
    await runNode.waitFor({ timeout: 15_000 });
    const runText = await runNode.innerText();
    expect(runText).toContain('waiting_for_approval');
    expect(runText).toMatch(/modelCalls \d+\/\d+/);
    expect(runText).toMatch(/toolCalls \d+\/\d+/);
    const approvalNode = page
      .locator('[data-testid=actor-tree] li', {
        has: page.locator('button.actor.kind-run.parked', { hasText: parked.runId }),
      })
      .locator('button.actor.kind-approval.parked')
      .first();
    expect(await approvalNode.innerText()).toContain('shell');
    await page.click('button[data-tab=inbox]');
    const card = page.locator('.inbox [data-testid=approval-card]');
    await card.waitFor({ timeout: 15_000 });
    const text = await card.innerText();
    expect(text).toContain('shell');
    expect(text).toContain('worker');
    expect(text).toContain('echo once >> night.log');
    expect(existsSync(join(dir, 'project', 'night.log'))).toBe(false);
    // The same preview from the API for a request the window did not see live; unknown ids are 404.
    const pending = await api<{ approvals: { id: string; agentId: string }[] }>('GET', '/v1/inbox');
    const id = pending.approvals.find((a) => a.agentId === 'worker')?.id as string;
    const item = await api<{ details: { preview: { kind: string; command: string } } }>(
      'GET',
      `/v1/inbox/${encodeURIComponent(id)}`,
    );
    expect(item.details.preview).toMatchObject({ kind: 'command', command: 'echo once >> night.log' });
    const unknown = await call(port, 'GET', '/v1/inbox/apr%3Anope', {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(unknown.status).toBe(404);
    expect((await call(port, 'GET', `/v1/inbox/${encodeURIComponent(id)}`)).status).toBe(401);
    await card.locator('input.reason').fill('checked the command');
    await card.locator('button.approve').click();
    await until(
      async () => (await runsOf('worker')).find((r) => r.status === 'completed'),
      60_000,
      'the resumed run',
    );
    await page.locator('[data-testid=inbox-badge]', { hasText: /^0$/ }).waitFor({ timeout: 15_000 });
    // The side effect happened exactly once.
    expect(readFileSync(join(dir, 'project', 'night.log'), 'utf8')).toBe('once\n');
    const [run] = await runsOf('worker');
    const audit = await api<{ events: AuditEvent[] }>(
      'GET',
      `/v1/runs/${encodeURIComponent(run!.runId)}/audit`,
    );
    const ofCall = (kind: string) => audit.events.filter((e) => e.kind === kind && e.callId === 'w1').length;
    expect(ofCall('started')).toBe(1);
    expect(ofCall('completed')).toBe(1);
    const resolved = audit.events.find((e) => e.kind === 'approval_resolved');
    expect(resolved?.detail?.decidedBy).toBe(LOCAL_USER);
    expect(resolved?.detail?.decisionReason).toBe('checked the command');
  }, 120_000);

  it('the actor view shows the live tree of the real runtime and draws a machine graph', async () => {
    const page = app.page;
    await page.click('button[data-tab=actors]');
    const actors = await call(port, 'GET', '/v1/actors', { headers: { Authorization: `Bearer ${token}` } });
    expect(actors.status).toBe(200);
    for (const agent of ['assistant', 'worker'])
      await page
        .locator('[data-testid=actor-tree] button.actor.kind-agent', { hasText: agent })
        .waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-testid=actors-unavailable]').count()).toBe(0);
    await page.selectOption('[data-testid=machine]', 'run');
    const graph = page.locator('.actors [data-testid=machine-graph][data-machine=run]');
    await graph.waitFor({ timeout: 15_000 });
    expect(await graph.locator('[data-state]').count()).toBeGreaterThan(3);
    // The diagram `snotra viz` draws: its transitions are the SVG's edges.
    expect(await graph.locator('svg g.edge').count()).toBeGreaterThan(3);
  }, 60_000);

  it('closing the window stops the runtime and leaves no process of the app’s tree', async () => {
    await app.snapshot();
    expect(app.seen.size).toBeGreaterThan(3);
    await app.page.close();
    expect(await app.process.exited).toBe(0);
    expect(app.process.stdout()).toContain('"event":"app.stopped"');
    await until(
      async () => (await stillRunning(app.seen)).length === 0,
      20_000,
      'every process of the tree gone',
    );
    await until(
      async () => {
        try {
          await call(port, 'GET', '/health');
          return false;
        } catch (err) {
          return (err as { code?: string }).code === 'ECONNREFUSED';
        }
      },
      10_000,
      'the sidecar port closed',
    );
  }, 60_000);
});
