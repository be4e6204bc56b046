// Issue 33, the Chat tab as a daily tool, in Chromium against one real `snotra start`
// (nats-server, SQLite, sidecar) with scripted models: the conversations are listed by title and
// last activity, one opened shows its runs so far and the next message continues it, one is
// renamed in place; and a run that delegates to a sub-agent that delegates again is drawn nested
// in place, live in the chat and in the Runs tab, with the approval inside the innermost run
// answered from the page.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, configDir, until } from '../sidecar/client.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';

const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let dir: string;
let snotra: StartedProcess;
let port: number;
let browser: Browser;
let page: Page;

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const a = await call(port, method, path, {
    headers: { ...AUTH, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: a.status, body: a.json() as T };
}

type Session = {
  sessionId: string;
  agentId: string;
  title: string | null;
  runs: number;
  activeRunId: string | null;
};
const sessionsNow = async () => (await api<{ sessions: Session[] }>('GET', '/v1/sessions')).body.sessions;
type Run = {
  runId: string;
  agentId: string;
  status: string;
  sessionId: string | null;
  parentRunId: string | null;
};
const runsNow = async () => (await api<{ runs: Run[] }>('GET', '/v1/runs')).body.runs;

/** Serious and critical axe-core violations of the page as it is now (rule id and a target each). */
async function seriousViolations(): Promise<string[]> {
  await page.evaluate(AXE);
  const found = (await page.evaluate('axe.run(document).then((r) => r.violations)')) as {
    id: string;
    impact: string | null;
    nodes: { target: string[] }[];
  }[];
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const final = (text: string) => ({ respond: { kind: 'final', text } });
const calls = (id: string, tool: string, args: unknown) => ({
  respond: { kind: 'calls', calls: [{ id, tool, args }] },
});

beforeAll(async () => {
  dir = configDir(
    {
      agents: {
        notes: { mode: 'ask', model: { provider: 'scripted', script: 'notes.json' } },
        talker: { mode: 'ask', model: { provider: 'scripted', script: 'talker.json' } },
        keeper: { mode: 'ask', model: { provider: 'scripted', script: 'keeper.json' } },
        lead: { mode: 'ask', model: { provider: 'scripted', script: 'lead.json' } },
        helper: {
          mode: 'ask',
          tools: ['spawn_agent', 'write_file'],
          // It may delegate again (a sub-agent may not unless its profile says so).
          mayDelegate: true,
          model: { provider: 'scripted', script: 'helper.json' },
        },
        deep: { mode: 'ask', tools: ['write_file'], model: { provider: 'scripted', script: 'deep.json' } },
      },
    },
    {
      // Each run of an agent starts at its script's first step.
      notes: [final('Noted: the blue folder')],
      talker: [final('Sunny all week')],
      keeper: [
        calls('k1', 'write_file', { path: 'kept.txt', content: 'kept\n' }),
        { expect: { kind: 'tool.result', tool: 'write_file' }, ...final('kept it') },
      ],
      lead: [
        calls('s1', 'spawn_agent', { profile: 'helper', task: 'have the note written' }),
        { expect: { kind: 'tool.result', tool: 'spawn_agent' }, ...final('all delegated') },
      ],
      helper: [
        calls('h1', 'spawn_agent', { profile: 'deep', task: 'write the note' }),
        { expect: { kind: 'tool.result', tool: 'spawn_agent' }, ...final('deep is done') },
      ],
      deep: [
        calls('d1', 'write_file', { path: 'deep.txt', content: 'nested\n' }),
        { expect: { kind: 'tool.result', tool: 'write_file' }, ...final('written') },
      ],
    },
  );
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
  });
  const sidecar = (await snotra.ready(60_000)).sidecar as string;
  port = Number(new URL(sidecar).port);
  // A conversation begun on another surface before the page opens.
  const sent = await api<{ runId: string }>('POST', '/v1/chat/notes/messages', {
    text: 'Remember the blue folder',
    sessionId: 'project-notes',
  });
  expect(sent.status).toBe(202);
  await until(
    async () => (await runsNow()).find((r) => r.runId === sent.body.runId && r.status === 'completed'),
    60_000,
    'the first notes run',
  );
  browser = await chromium.launch({
    executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // The desktop shell adds the token to this origin's requests; the test's context does the same.
  const context = await browser.newContext({ extraHTTPHeaders: AUTH });
  page = await context.newPage();
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.locator('[data-testid=feed]', { hasText: /^live$/ }).waitFor({ timeout: 30_000 });
}, 150_000);

afterAll(async () => {
  await browser?.close();
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the Chat tab (real runtime, Chromium)', () => {
  it('lists the conversations by title and last activity; one opened shows its runs and the next message continues it; a rename shows at once', async () => {
    await page.click('nav button[data-tab=chat]');
    const list = page.locator('.chat [data-testid=session-list]');
    const notesRow = list.locator('li[data-key="project-notes"]');
    await notesRow.waitFor({ timeout: 15_000 });
    expect(await notesRow.locator('.run-title').innerText()).toBe('Remember the blue folder');
    expect(await notesRow.locator('.meta').innerText()).toMatch(
      /^notes · sidecar · today, \d\d:\d\d:\d\d · 1 run$/,
    );
    expect(await notesRow.innerText()).not.toContain('project-notes');

    // A new conversation in the page: listed first, marked as the open one.
    await page.waitForSelector('[data-testid=agent] option[value=talker]', { state: 'attached' });
    await page.selectOption('[data-testid=agent]', 'talker');
    await page.fill('[data-testid=message]', 'What is the weather like');
    await page.keyboard.press('Enter');
    const transcript = page.locator('.chat [data-testid=transcript]');
    await transcript.locator('[data-testid=run-completed]').waitFor({ timeout: 30_000 });
    const talkerSession = await until(
      async () => (await sessionsNow()).find((s) => s.agentId === 'talker' && s.runs === 1),
      15_000,
      'the talker session',
    );
    const talkerRow = list.locator(`li[data-key="${talkerSession.sessionId}"]`);
    await talkerRow
      .locator('.run-title', { hasText: /^What is the weather like$/ })
      .waitFor({ timeout: 15_000 });
    expect(await list.locator('li').first().getAttribute('data-key')).toBe(talkerSession.sessionId);
    expect(await talkerRow.locator('button').getAttribute('aria-current')).toBe('true');
    expect(await notesRow.locator('button').getAttribute('aria-current')).toBeNull();
    expect(await page.locator('[data-testid=session-title]').innerText()).toBe('What is the weather like');

    // Opening the other one: its run so far, and nothing of the conversation left.
    await notesRow.locator('button').click();
    await transcript.locator('.run.past [data-testid=answer]').first().waitFor({ timeout: 15_000 });
    expect(await transcript.locator('.msg.user').allInnerTexts()).toEqual(['Remember the blue folder']);
    expect(await transcript.locator('[data-testid=answer]').allInnerTexts()).toEqual([
      'Noted: the blue folder',
    ]);
    expect(await transcript.innerText()).not.toContain('Sunny all week');
    expect(await page.locator('[data-testid=agent]').inputValue()).toBe('notes');
    expect(await page.locator('[data-testid=session-title]').innerText()).toBe('Remember the blue folder');
    expect(await notesRow.locator('button').getAttribute('aria-current')).toBe('true');

    // The next message continues it: the same session, now with two runs, listed first.
    await page.fill('[data-testid=message]', 'Which folder was it?');
    await page.keyboard.press('Enter');
    await transcript.locator('[data-testid=run-completed]').last().waitFor({ timeout: 30_000 });
    const notes = await until(
      async () => (await sessionsNow()).find((s) => s.sessionId === 'project-notes' && s.runs === 2),
      15_000,
      'the notes session with its second run',
    );
    expect(notes.title).toBe('Remember the blue folder');
    const notesRuns = (await runsNow()).filter((r) => r.agentId === 'notes');
    expect(notesRuns).toHaveLength(2);
    expect(notesRuns.every((r) => r.sessionId === 'project-notes')).toBe(true);
    expect((await sessionsNow()).filter((s) => s.agentId === 'notes')).toHaveLength(1);
    await notesRow.locator('.meta', { hasText: / · 2 runs$/ }).waitFor({ timeout: 15_000 });
    expect(await list.locator('li').first().getAttribute('data-key')).toBe('project-notes');
    expect(await transcript.locator('.msg.user').allInnerTexts()).toEqual([
      'Remember the blue folder',
      'Which folder was it?',
    ]);

    // Renamed from the chat's header: the list, the header and the API agree.
    await page.click('[data-testid=rename-session]');
    await page.fill('[data-testid=session-title-input]', '  Blue   folder notes ');
    await page.keyboard.press('Enter');
    await notesRow.locator('.run-title', { hasText: /^Blue folder notes$/ }).waitFor({ timeout: 15_000 });
    await page
      .locator('[data-testid=session-title]', { hasText: /^Blue folder notes$/ })
      .waitFor({ timeout: 15_000 });
    expect((await sessionsNow()).find((s) => s.sessionId === 'project-notes')?.title).toBe(
      'Blue folder notes',
    );
    // A title the sidecar refuses is named where it was typed; the old one stays.
    await page.click('[data-testid=rename-session]');
    await page.fill('[data-testid=session-title-input]', '   ');
    await page.keyboard.press('Enter');
    await page
      .locator('.chat .title-row [role=status]', { hasText: /^invalid_body: .*title/ })
      .waitFor({ timeout: 15_000 });
    await page.keyboard.press('Escape');
    expect((await sessionsNow()).find((s) => s.sessionId === 'project-notes')?.title).toBe(
      'Blue folder notes',
    );

    // A new conversation leaves the open one: the next message starts a session of its own.
    await page.click('[data-testid=new-session]');
    expect(await transcript.locator('.msg').count()).toBe(0);
    expect(await page.locator('[data-testid=session-title]').innerText()).toBe('New conversation');
    expect(await list.locator('button[aria-current]').count()).toBe(0);
  }, 150_000);

  it('a conversation opened while its run waits for an approval follows that run to its end', async () => {
    const sent = await api<{ runId: string }>('POST', '/v1/chat/keeper/messages', {
      text: 'Keep this note',
      sessionId: 'keeper-notes',
    });
    expect(sent.status).toBe(202);
    const approval = await until(
      async () =>
        (await api<{ approvals: { id: string; agentId: string }[] }>('GET', '/v1/inbox')).body.approvals.find(
          (a) => a.agentId === 'keeper',
        ),
      30_000,
      'the keeper approval',
    );
    const row = page.locator('.chat [data-testid=session-list] li[data-key="keeper-notes"]');
    await row.locator('.badge', { hasText: /^running$/ }).waitFor({ timeout: 15_000 });
    await row.locator('button').click();
    const past = page.locator(`.chat [data-testid=transcript] .run.past[data-run="${sent.body.runId}"]`);
    const chip = past.locator('.call[data-call=k1] [data-testid=decision]');
    await chip.filter({ hasText: /^waiting for you$/ }).waitFor({ timeout: 15_000 });
    expect(await past.locator('.status-line').count()).toBe(0);
    expect(
      (await api('POST', `/v1/inbox/${encodeURIComponent(approval.id)}/decision`, { decision: 'approve' }))
        .status,
    ).toBe(200);
    await past.locator('.status-line.done').waitFor({ timeout: 30_000 });
    expect(await chip.innerText()).toMatch(/^approved by /);
    expect(await past.locator('[data-testid=answer]').innerText()).toBe('kept it');
    expect(readFileSync(join(dir, 'project', 'kept.txt'), 'utf8')).toBe('kept\n');
    await row.locator('.badge', { hasText: /^idle$/ }).waitFor({ timeout: 15_000 });
    await page.click('[data-testid=new-session]');
  }, 90_000);

  it('a run that delegates to a sub-agent that delegates again is nested in place, and the approval inside the innermost run is answered from the page', async () => {
    await page.selectOption('[data-testid=agent]', 'lead');
    await page.fill('[data-testid=message]', 'Have the note written, through two helpers');
    await page.keyboard.press('Enter');
    const transcript = page.locator('.chat [data-testid=transcript]');
    const top = transcript.locator('.run[data-run]:not(.sub)').last();
    await top.waitFor({ timeout: 30_000 });
    const runId = (await top.getAttribute('data-run')) as string;
    expect(runId.startsWith('lead:')).toBe(true);
    // The helper's run sits in the lead's, right after the spawn_agent call that started it; the
    // deep one in the helper's, after its own spawn_agent call; the approval in the deep one.
    const helper = top.locator(`> .run-body > [data-testid=sub-run][data-run="${runId}/s1"]`);
    const deep = helper.locator(`> .run-body > [data-testid=sub-run][data-run="${runId}/s1/h1"]`);
    const card = deep.locator('> .run-body > [data-testid=approval-card]');
    await card.waitFor({ timeout: 60_000 });
    expect(await helper.locator('> .label').innerText()).toBe('sub-agent helper');
    expect(await deep.locator('> .label').innerText()).toBe('sub-agent deep');
    expect(
      await top.evaluate(
        (el, id) =>
          el.querySelector(`[data-run="${id}/s1"]`)?.previousElementSibling?.getAttribute('data-call'),
        runId,
      ),
    ).toBe('s1');
    expect(
      await helper.evaluate(
        (el, id) =>
          el.querySelector(`[data-run="${id}/s1/h1"]`)?.previousElementSibling?.getAttribute('data-call'),
        runId,
      ),
    ).toBe('h1');
    expect(await card.getAttribute('aria-label')).toBe('Approval for write_file by deep');
    expect(await card.innerText()).toContain('deep.txt');
    // Nothing of the inner runs leaks to the outer levels.
    expect(await top.locator('> .run-body > [data-testid=approval-card]').count()).toBe(0);
    expect(await helper.locator('> .run-body > [data-testid=approval-card]').count()).toBe(0);
    expect(existsSync(join(dir, 'project', 'deep.txt'))).toBe(false);

    await card.locator('button.approve').click();
    await top.locator('> .run-body > [data-testid=run-completed]').waitFor({ timeout: 60_000 });
    expect(readFileSync(join(dir, 'project', 'deep.txt'), 'utf8')).toBe('nested\n');
    expect(await deep.locator('> .run-body > [data-testid=run-completed]').count()).toBe(1);
    expect(await helper.locator('> .run-body > [data-testid=run-completed]').count()).toBe(1);
    expect(await deep.locator('> .run-body > [data-testid=answer]').innerText()).toBe('written');
    expect(await helper.locator('> .run-body > [data-testid=answer]').innerText()).toBe('deep is done');
    expect(await top.locator('> .run-body > [data-testid=answer]').innerText()).toBe('all delegated');
    const runs = await runsNow();
    expect(runs.find((r) => r.runId === `${runId}/s1/h1`)).toMatchObject({
      agentId: 'deep',
      parentRunId: `${runId}/s1`,
      status: 'completed',
    });

    // The Runs tab draws the same nesting from the store, the approval's decision in place.
    await page.click('nav button[data-tab=runs]');
    await page.locator(`[data-testid=run-list] li[data-key="${runId}"]`).click();
    const convo = page.locator(`.runs [data-testid=conversation][data-run="${runId}"]`);
    const subHelper = convo.locator(
      `.call[data-call=s1] > [data-testid=sub-conversation][data-run="${runId}/s1"]`,
    );
    const subDeep = subHelper.locator(
      `.call[data-call=h1] > [data-testid=sub-conversation][data-run="${runId}/s1/h1"]`,
    );
    await subDeep.waitFor({ timeout: 15_000 });
    expect(await subHelper.getAttribute('aria-label')).toBe('sub-agent helper');
    expect(await subDeep.getAttribute('aria-label')).toBe('sub-agent deep');
    const write = subDeep.locator('.call[data-call=d1]');
    expect(await write.locator('[data-testid=decision]').innerText()).toMatch(/^approved by /);
    expect(await convo.locator('.call[data-call=d1]').count()).toBe(1);

    // No serious or critical axe-core violation in the chat with its list and nested runs, nor here.
    await page.click('nav button[data-tab=chat]');
    const chat = await seriousViolations();
    await page.click('nav button[data-tab=runs]');
    expect({ chat, runs: await seriousViolations() }).toEqual({ chat: [], runs: [] });
  }, 150_000);
});
