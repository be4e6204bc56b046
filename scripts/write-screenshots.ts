// `npm run docs:screenshots`: the main views of the web app, taken through the real
// `snotra app --headless` on a temporary workspace with the scripted model, into docs/screenshots/.
// The page is driven over Chromium's DevTools endpoint, which the app opens only for
// SNOTRA_APP_DEVTOOLS=1 with --headless (bound to 127.0.0.1).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'docs', 'screenshots');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-screenshots-')));
mkdirSync(join(dir, 'project'));
writeFileSync(
  join(dir, 'project', 'README.md'),
  '# Weekly report\n\nStatus: draft\nOwner: the team\n\nNumbers are in report.csv.\n',
);
const fireAt = new Date(Date.now() + 4000).toISOString().replace(/\.\d+Z$/, '');
writeFileSync(
  join(dir, 'snotra.config.json'),
  JSON.stringify({
    stateDir: 'state',
    workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
    agents: {
      assistant: { mode: 'ask', model: { provider: 'scripted', script: 'assistant.json' } },
      nightly: { mode: 'ask', model: { provider: 'scripted', script: 'nightly.json' } },
      researcher: { mode: 'ask', model: { provider: 'scripted', script: 'researcher.json' } },
    },
    surfaces: {
      scheduled: [
        {
          id: 'nightly-build',
          agent: 'nightly',
          cron: fireAt,
          message: 'run the nightly build',
          missed: 'run-once',
        },
      ],
      goalLoops: [
        {
          id: 'weekly-digest',
          agent: 'researcher',
          objective: 'Summarise the week in digest.md until the team signs it off.',
          maxIterations: 5,
          budget: { modelCalls: 40, toolCalls: 20 },
        },
      ],
    },
  }),
);
writeFileSync(
  join(dir, 'assistant.json'),
  JSON.stringify([
    {
      respond: {
        kind: 'calls',
        text: 'I will mark the report as final.',
        calls: [
          {
            id: 'e1',
            tool: 'edit_file',
            args: { path: 'README.md', old: 'Status: draft', new: 'Status: final' },
          },
        ],
      },
    },
    {
      expect: { kind: 'tool.result', tool: 'edit_file' },
      respond: { kind: 'final', text: 'Done: README.md now says "Status: final".' },
    },
  ]),
);
writeFileSync(
  join(dir, 'nightly.json'),
  JSON.stringify([
    {
      respond: {
        kind: 'calls',
        calls: [{ id: 'n1', tool: 'shell', args: { command: 'make build > build.log' } }],
      },
    },
    { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'built' } },
  ]),
);
writeFileSync(
  join(dir, 'researcher.json'),
  JSON.stringify([
    {
      respond: {
        kind: 'calls',
        calls: [{ id: 'r1', tool: 'shell', args: { command: 'git log --since=1.week > week.txt' } }],
      },
    },
    { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'collected' } },
  ]),
);

const app = spawn(
  process.execPath,
  [join(ROOT, 'bin/snotra.js'), 'app', '--headless', '--config', join(dir, 'snotra.config.json')],
  {
    env: { ...process.env, SNOTRA_APP_DEVTOOLS: '1', SNOTRA_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const exited = new Promise<number | null>((r) => app.once('exit', (code) => r(code)));
try {
  const ready = await new Promise<{ devtools: string }>((resolve, reject) => {
    let out = '';
    app.stdout.on('data', (d: Buffer) => {
      out += String(d);
      const line = out.split('\n').find((l) => l.includes('"event":"app.ready"'));
      if (line !== undefined) resolve(JSON.parse(line) as { devtools: string });
    });
    void exited.then((code) => reject(new Error(`snotra app ended (${code}) before it was ready`)));
  });
  const browser = await chromium.connectOverCDP(ready.devtools);
  const page = browser.contexts()[0]!.pages()[0]!;
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`) });
  mkdirSync(OUT, { recursive: true });
  // Waits by selector, not by a script predicate: the page's CSP forbids eval, which polling needs.
  await page.locator('[data-testid=feed]', { hasText: /^live$/ }).waitFor({ timeout: 30_000 });
  // Inbox: the scheduled (unattended) run parked on its shell call.
  await page.locator('[data-testid=inbox-badge]', { hasText: /^1$/ }).waitFor({ timeout: 60_000 });
  await page.click('nav button[data-tab=inbox]');
  await page.locator('.inbox [data-testid=approval-card]').waitFor();
  await page.locator('.inbox input.reason').fill('checked: only the build target');
  await shot('inbox');
  // Chat with an inline approval card and its diff.
  await page.click('nav button[data-tab=chat]');
  await page.waitForSelector('[data-testid=agent] option[value=assistant]', { state: 'attached' });
  await page.selectOption('[data-testid=agent]', 'assistant');
  await page.fill('[data-testid=message]', 'Mark the weekly report as final.');
  await page.click('.chat form button[type=submit]');
  const card = page.locator('.chat [data-testid=approval-card]');
  await card.waitFor({ timeout: 30_000 });
  await shot('chat');
  await card.locator('button.approve').click();
  await page.locator('.chat [data-testid=run-completed]').waitFor({ timeout: 30_000 });
  // Runs by title: the run's conversation, then its audit timeline and verification (second tab).
  await page.click('nav button[data-tab=runs]');
  await page.locator('[data-testid=run-list] li', { hasText: 'Mark the weekly report' }).first().click();
  await page.locator('[data-testid=conversation] [data-testid=decision]').waitFor({ timeout: 15_000 });
  await shot('runs');
  await page.click('.run-detail button[data-tab=audit]');
  await page.locator('[data-testid=timeline] li[data-kind=completed]').waitFor({ timeout: 15_000 });
  await shot('runs-audit');
  // Goals: the goal loop started from the page; its first iteration's run parks on its shell call.
  await page.click('nav button[data-tab=goals]');
  const goal = page.locator('[data-testid=goal-card][data-goal="weekly-digest"]');
  await goal.locator('button[data-action=start]').click();
  await goal.locator('.badge.parked').waitFor({ state: 'visible', timeout: 30_000 });
  await shot('goals');
  // Actors: the live tree (agents → goal → its parked run → the approval; the parked nightly run)
  // and the goal machine's diagram (the SVG of `snotra viz`) with the goal's state highlighted.
  await page.click('nav button[data-tab=actors]');
  await page.locator('[data-testid=actor-tree] button.actor.kind-goal').click();
  await page
    .locator('.actors [data-testid=machine-graph][data-machine=goal] svg g.state.current')
    .waitFor({ timeout: 15_000 });
  await page.locator('nav').scrollIntoViewIfNeeded();
  await shot('actors');
  await page.close();
  const code = await exited;
  if (code !== 0) throw new Error(`snotra app exited ${code}`);
  console.log(`screenshots written to ${OUT}`);
} finally {
  if (app.exitCode === null) app.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
}
