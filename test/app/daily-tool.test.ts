// Issue 33, "Must show": the web app as a daily tool, in Chromium against one real `snotra start`
// (nats-server, SQLite, sidecar) whose models are a scripted one and a fake OpenAI-compatible
// server that streams. One browser and one page for the file: a conversation streaming into the
// page (with the thinking indicator), an approval decided with the keyboard alone, a notification
// fired while the tab is hidden, the live state highlight moving as a run parks and resumes, and
// axe-core finding no serious or critical violation in any view.
//
// Headless Chromium reports every page as visible (no tab strip, no minimize), so the hidden tab
// is the one simulated part: an init script makes `document.visibilityState` answer `hidden` on
// request. The notification is the real API under a granted permission; the init script records
// each one constructed, then constructs it for real.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../model/fake-server.ts';
import { call, configDir, until } from '../sidecar/client.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';

const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let dir: string;
let model: FakeModelServer;
let snotra: StartedProcess;
let port: number;
let origin: string;
let browser: Browser;
let page: Page;
const gate = () => {
  let open: () => void = () => {};
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
};
const firstWords = gate();
const rest = gate();

const chunk = (content: string): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const a = await call(port, method, path, {
    headers: { ...AUTH, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: a.status, body: a.json() as T };
}

type Run = { runId: string; agentId: string; status: string; title: string | null; sessionId: string | null };
const runsOf = async (agent: string) =>
  (await api<{ runs: Run[] }>('GET', '/v1/runs')).body.runs.filter((r) => r.agentId === agent);

/**
 * Run in the page before its own scripts: records each Notification constructed (then constructs
 * it for real) and lets the test say whether the document is hidden.
 */
const IN_PAGE = `
(() => {
  const Real = window.Notification;
  const seen = [];
  class Recorded extends Real {
    constructor(title, options) {
      super(title, options);
      seen.push({ title, body: (options && options.body) || '', tag: (options && options.tag) || '' });
    }
  }
  Object.defineProperty(Recorded, 'permission', { get: () => Real.permission });
  window.Notification = Recorded;
  window.__notified = seen;
  let hidden = false;
  Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => hidden });
  window.__setHidden = (value) => {
    hidden = value;
    document.dispatchEvent(new Event('visibilitychange'));
  };
})();
`;

/** Serious and critical axe-core violations of the page as it is now (rule id and a target each). */
async function seriousViolations(): Promise<string[]> {
  // Evaluated over DevTools (the page's CSP refuses injected script tags, as it should).
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

beforeAll(async () => {
  model = await FakeModelServer.start();
  // The writer's one answer: held before its first word, then after two chunks.
  model.route = () => ({
    sse: [
      chunk('Here is the plan, written as it comes: '),
      // Longer than the API key: the redaction hold-back (the longest secret's length) lets the first chunk out.
      chunk('first, read the notes from this week and from the week before. '),
      chunk('Then, write the summary.'),
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
      'data: [DONE]\n\n',
    ],
    gates: [
      { after: 0, open: firstWords.p },
      { after: 2, open: rest.p },
    ],
  });
  const fireAt = new Date(Date.now() + 20_000).toISOString().replace(/\.\d+Z$/, '');
  dir = configDir(
    {
      secrets: { backend: 'env' },
      agents: {
        writer: {
          mode: 'ask',
          tools: ['read_file'],
          model: {
            provider: 'openai-compatible',
            baseUrl: `${model.url}/v1`,
            model: 'test-model',
            apiKey: { secret: 'openai-key' },
          },
        },
        asker: { mode: 'ask', model: { provider: 'scripted', script: 'asker.json' } },
        worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } },
      },
      surfaces: {
        scheduled: [
          { id: 'nightly', agent: 'worker', cron: fireAt, message: 'log the night', missed: 'run-once' },
        ],
      },
    },
    {
      asker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'k1', tool: 'write_file', args: { path: 'keyboard.txt', content: 'typed\n' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'saved' } },
      ],
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'w1', tool: 'write_file', args: { path: 'night.log', content: 'once\n' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'logged' } },
      ],
    },
  );
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
    SNOTRA_SECRET_OPENAI_KEY: 'sk-daily-tool-test-key-0000',
  });
  const sidecar = (await snotra.ready(60_000)).sidecar as string;
  port = Number(new URL(sidecar).port);
  origin = `http://127.0.0.1:${port}`;
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
  await context.grantPermissions(['notifications'], { origin });
  await context.addInitScript({ content: IN_PAGE });
  page = await context.newPage();
  await page.goto(`${origin}/`);
  await page.locator('[data-testid=feed]', { hasText: /^live$/ }).waitFor({ timeout: 30_000 });
}, 120_000);

afterAll(async () => {
  firstWords.open();
  rest.open();
  await browser?.close();
  if (snotra !== undefined) await stopProcess(snotra);
  await model?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the web app as a daily tool (real runtime, Chromium)', () => {
  it('a conversation streams into the page: thinking with its elapsed time, then the words as they are written, then the whole answer', async () => {
    await page.click('button[data-tab=chat]');
    await page.waitForSelector('[data-testid=agent] option[value=writer]', { state: 'attached' });
    await page.selectOption('[data-testid=agent]', 'writer');
    await page.fill('[data-testid=message]', 'Plan the weekly summary');
    await page.keyboard.press('Enter');
    const chat = page.locator('.chat');
    // The model holds its first word: the page says it is thinking, and for how long.
    const thinking = chat.locator('[data-testid=thinking]:visible');
    await thinking.waitFor({ timeout: 30_000 });
    await chat
      .locator('[data-testid=thinking-elapsed]', { hasText: /^[1-9]\d* s$/ })
      .waitFor({ timeout: 30_000 });
    firstWords.open();
    // Two chunks are out, the rest is held: the page shows them while the turn is not over.
    const streaming = chat.locator('[data-testid=answer].streaming');
    await streaming
      .filter({ hasText: 'Here is the plan, written as it comes:' })
      .waitFor({ timeout: 30_000 });
    expect(await streaming.innerText()).not.toContain('Then, write the summary.');
    expect(await chat.locator('[data-testid=thinking]:visible').count()).toBe(0);
    expect(await chat.locator('[data-testid=run-completed]').count()).toBe(0);
    rest.open();
    await chat.locator('[data-testid=run-completed]').waitFor({ timeout: 30_000 });
    const answers = chat.locator('[data-testid=answer]');
    expect(await answers.count()).toBe(1);
    expect(await answers.innerText()).toBe(
      'Here is the plan, written as it comes: first, read the notes from this week and from the week before. Then, write the summary.',
    );
    expect(await chat.locator('[data-testid=answer].streaming').count()).toBe(0);
    // The run is listed by its title (the first message), and the title can be edited.
    const [run] = await runsOf('writer');
    expect(run?.title).toBe('Plan the weekly summary');
    await page.click('nav button[data-tab=runs]');
    const row = page.locator(`[data-testid=run-list] li[data-key="${run!.runId}"]`);
    expect(await row.innerText()).toContain('Plan the weekly summary');
    expect(await row.innerText()).not.toContain(run!.runId);
    await row.click();
    await page.locator('[data-testid=conversation] [data-testid=answer]').waitFor({ timeout: 15_000 });
    await page.click('[data-testid=rename]');
    await page.fill('[data-testid=title-input]', 'Weekly summary plan');
    await page.keyboard.press('Enter');
    await row.filter({ hasText: 'Weekly summary plan' }).waitFor({ timeout: 15_000 });
    expect((await runsOf('writer'))[0]?.title).toBe('Weekly summary plan');
  }, 120_000);

  it('PATCH /v1/sessions/:id renames a session; a bad title is a 400 naming the field, an unknown session a 404', async () => {
    const [run] = await runsOf('writer');
    const sessionId = run!.sessionId as string;
    const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;
    const ok = await api<{ session: { title: string } }>('PATCH', path, { title: '  Weekly\n  notes  ' });
    expect(ok.status).toBe(200);
    expect(ok.body.session.title).toBe('Weekly notes');
    for (const body of [{ title: '   ' }, { title: 'a\u0007b' }, { title: 'x'.repeat(201) }, { name: 'x' }]) {
      const bad = await api<{ error: { code: string; message: string } }>('PATCH', path, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.code).toBe('invalid_body');
      expect(bad.body.error.message).toMatch(/title|name/);
    }
    const missing = await api<{ error: { code: string } }>('PATCH', '/v1/sessions/nope-session', {
      title: 'x',
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('session_not_found');
    expect((await call(port, 'PATCH', path, { body: '{"title":"x"}' })).status).toBe(401);
  }, 30_000);

  it('while the tab is hidden a waiting approval fires a notification (permission granted) and the title shows the count', async () => {
    await page.evaluate('window.__setHidden(true)');
    // Another surface starts the chat: nothing in this tab asked for it.
    const sent = await api<{ runId: string }>('POST', '/v1/chat/asker/messages', {
      text: 'save what I typed',
    });
    expect(sent.status).toBe(202);
    await until(
      async () => ((await page.evaluate('window.__notified.length')) as number) > 0,
      30_000,
      'a notification',
    );
    const notified = (await page.evaluate('window.__notified')) as { title: string; body: string }[];
    expect(notified).toHaveLength(1);
    expect(notified[0]?.title).toBe('Approval waiting: write_file');
    expect(notified[0]?.body).toBe('asker: Writes need your approval in ask mode');
    // The count of every approval waiting (the scheduled run may park meanwhile: read each time).
    await until(
      async () => {
        const waiting = (await api<{ approvals: unknown[] }>('GET', '/v1/inbox')).body.approvals.length;
        return waiting > 0 && (await page.title()) === `(${waiting}) Snotra`;
      },
      15_000,
      'the title badge',
    );
    // Visible again: a further approval would not notify (the page is in front of the person).
    await page.evaluate('window.__setHidden(false)');
  }, 60_000);

  it('the approval is decided with the keyboard alone: tabs by arrow keys, Tab to the card, Enter; the decision shows green', async () => {
    // Start from the top of the page, focus on the selected tab.
    await page.locator('nav [role=tab][aria-selected=true]').focus();
    for (
      let i = 0;
      i < 5 && (await page.evaluate("document.activeElement?.getAttribute('data-tab')")) !== 'inbox';
      i++
    )
      await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Enter');
    expect(await page.locator('nav [role=tab][data-tab=inbox]').getAttribute('aria-selected')).toBe('true');
    const card = page.locator('.inbox [data-testid=approval-card]', { hasText: 'keyboard.txt' });
    await card.waitFor({ timeout: 15_000 });
    // Human words first, the rule in small print, the expiry with its date and what is left.
    expect(await card.locator('.why').innerText()).toContain('Writes need your approval in ask mode');
    expect(await card.locator('small.rule').innerText()).toContain('mode_ask');
    expect(await card.locator('.expires').innerText()).toMatch(/\d{2}:\d{2}:\d{2} \(in \d+ (min|h|s)/);
    let focused = '';
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      focused = (await page.evaluate(
        "`${document.activeElement?.getAttribute('aria-label') ?? ''}|${document.activeElement?.closest('[data-approval]')?.getAttribute('aria-label') ?? ''}`",
      )) as string;
      if (focused === 'Approve write_file|Approval for write_file by asker') break;
    }
    expect(focused).toBe('Approve write_file|Approval for write_file by asker');
    await page.keyboard.press('Enter');
    await until(async () => existsSync(join(dir, 'project', 'keyboard.txt')), 30_000, 'the approved write');
    const runs = await until(
      async () => (await runsOf('asker')).find((r) => r.status === 'completed'),
      30_000,
      'the asker run completed',
    );
    expect(runs.title).toBe('save what I typed');
    const status = page.locator(
      '.chat [data-testid=approval-card] .status.decision-approved, .inbox [data-testid=approval-card] .status.decision-approved',
    );
    await status.first().waitFor({ state: 'attached', timeout: 15_000 });
    expect(readFileSync(join(dir, 'project', 'keyboard.txt'), 'utf8')).toBe('typed\n');
    // The call's detail proves it (issue 37): opened, the chain from the audit, each link with its
    // seq, the approval decided through the sidecar, the arguments run equal to those approved.
    await page.click('nav button[data-tab=runs]');
    await page.locator(`[data-testid=run-list] li[data-key="${runs.runId}"]`).click();
    const proof = page.locator('[data-testid=conversation] [data-testid=provenance]').first();
    await proof.locator('summary').click();
    await proof.locator('[data-testid=chain]').waitFor({ timeout: 15_000 });
    expect(await proof.locator('[data-testid=chain]').innerText()).toBe(
      'The chain closes: what ran is what was decided.',
    );
    const steps = await proof
      .locator('li[data-step]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-step')));
    expect(steps).toEqual(
      expect.arrayContaining([
        'proposed',
        'decided',
        'approval_requested',
        'approval_resolved',
        'arguments',
        'started',
      ]),
    );
    expect(await proof.locator('li[data-step=approval_resolved]').innerText()).toMatch(
      /^#\d+ approval_resolved: .*sidecar/,
    );
  }, 60_000);

  it('the Actors tab draws the run machine as `snotra viz` does and moves the highlight live as a run parks and resumes', async () => {
    const parked = await until(
      async () => (await runsOf('worker')).find((r) => r.status === 'waiting_for_approval'),
      90_000,
      'the parked scheduled run',
    );
    await page.click('nav button[data-tab=actors]');
    const node = page.locator('[data-testid=actor-tree] button.actor.kind-run.parked', {
      hasText: parked.runId,
    });
    await node.waitFor({ timeout: 30_000 });
    await node.click();
    const figure = page.locator('.actors figure[data-testid=machine-graph][data-machine=run]');
    await figure.locator('svg g.state.current').waitFor({ timeout: 30_000 });
    expect(await figure.locator('svg g.state.current').getAttribute('data-state')).toBe(
      'run.waiting_for_approval',
    );
    // The diagram is Graphviz's: edges and nodes as `snotra viz run --format svg` draws them.
    expect(await figure.locator('svg g.edge').count()).toBeGreaterThan(5);
    // Every highlight the page shows from now on, in order.
    await page.evaluate(`(() => {
      const fig = document.querySelector('.actors figure[data-machine=run]');
      const seen = [fig.dataset.current];
      new MutationObserver(() => {
        if (seen[seen.length - 1] !== fig.dataset.current) seen.push(fig.dataset.current);
      }).observe(fig, { attributes: true, attributeFilter: ['data-current'] });
      window.__highlights = seen;
    })()`);
    const inbox = await api<{ approvals: { id: string; agentId: string }[] }>('GET', '/v1/inbox');
    const id = inbox.body.approvals.find((a) => a.agentId === 'worker')?.id as string;
    expect(
      (await api('POST', `/v1/inbox/${encodeURIComponent(id)}/decision`, { decision: 'approve' })).status,
    ).toBe(200);
    await figure.locator('svg g.state.current[data-state="run.completed"]').waitFor({ timeout: 60_000 });
    const highlights = (await page.evaluate('window.__highlights')) as string[];
    expect(highlights[0]).toBe('waiting_for_approval');
    expect(highlights[highlights.length - 1]).toBe('completed');
    // The ancestors of the current state are marked, nothing else is current.
    expect(await figure.locator('svg g.state.current').count()).toBe(1);
    expect(readFileSync(join(dir, 'project', 'night.log'), 'utf8')).toBe('once\n');
  }, 120_000);

  it('axe-core finds no serious or critical violation in any view', async () => {
    const found: Record<string, string[]> = {};
    for (const tab of ['inbox', 'chat', 'runs', 'goals', 'actors']) {
      await page.click(`nav button[data-tab=${tab}]`);
      if (tab === 'runs') {
        await page.locator('[data-testid=run-list] li').first().click();
        await page.locator('[data-testid=conversation]').waitFor({ timeout: 15_000 });
      }
      found[tab] = await seriousViolations();
      if (tab === 'runs') {
        await page.click('.run-detail button[data-tab=audit]');
        await page.locator('[data-testid=timeline]').waitFor({ timeout: 15_000 });
        found['runs/audit'] = await seriousViolations();
      }
    }
    expect(found).toEqual({ inbox: [], chat: [], runs: [], 'runs/audit': [], goals: [], actors: [] });
  }, 120_000);
});
