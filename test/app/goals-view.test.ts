// The Goals view and the goal nodes of the Actors view, end to end through the real
// `snotra app --headless`: controls clicked on the page reach the runtime (checked with
// `snotra goal show --json`, which reads the store), a control made from the CLI reaches the page
// through the live events feed, and neither the page nor the actor tree shows the objective.
import { execFile, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, configDir, until } from '../sidecar/client.ts';
import { BIN } from '../support/snotra-process.ts';
import { procText, startApp, type RunningApp } from './app-process.ts';

const OBJECTIVE = 'archive the 2025 invoices into the ledger folder';
let dir: string;
let config: string;
let app: RunningApp;
let port: number;
let token: string;

async function goalShow(): Promise<{ status: string; parked?: boolean; iteration?: number }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [BIN, 'goal', 'show', 'g', '--config', config, '--json'],
    { timeout: 60_000 },
  );
  return JSON.parse(stdout) as { status: string };
}

async function cli(...args: string[]): Promise<void> {
  await promisify(execFile)(process.execPath, [BIN, ...args, '--config', config], { timeout: 60_000 });
}

/** Waits for the page's card of goal g to show a status (its data attribute; a selector, no script). */
const cardStatus = (status: string) =>
  app.page
    .locator(`[data-testid=goal-card][data-goal="g"][data-status="${status}"]`)
    .waitFor({ timeout: 30_000 });

const button = (action: string) => app.page.locator(`[data-goal="g"] button[data-action=${action}]`);

beforeAll(async () => {
  dir = configDir(
    {
      agents: { worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } } },
      surfaces: {
        goalLoops: [
          {
            id: 'g',
            agent: 'worker',
            objective: OBJECTIVE,
            maxIterations: 3,
            budget: { modelCalls: 12, tokens: 400, costUsd: 0.05 },
          },
        ],
      },
    },
    {
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'w1', tool: 'shell', args: { command: 'echo step >> goal.log' } }],
            // What this model call used: billed to the goal when its run ends (here: cancelled).
            usage: { inputTokens: 212, outputTokens: 19, costUsd: 0.0123 },
          },
        },
        { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'one step' } },
      ],
    },
  );
  config = join(dir, 'snotra.config.json');
  app = await startApp(['--config', config]);
  port = Number(new URL(app.ready.sidecar).port);
  const env = procText(app.ready.runtimePid).environ.split('\0');
  token = (env.find((e) => e.startsWith('SNOTRA_SIDECAR_TOKEN=')) ?? '').slice(
    'SNOTRA_SIDECAR_TOKEN='.length,
  );
  await app.page.locator('[data-testid=feed]', { hasText: /^live$/ }).waitFor({ timeout: 30_000 });
}, 120_000);

afterAll(async () => {
  await app?.browser.close().catch(() => {});
  if (app !== undefined && app.process.child.exitCode === null) {
    app.process.child.kill('SIGTERM');
    await app.process.exited;
  }
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('snotra app --headless: the Goals view', () => {
  it('start, pause, resume and cancel from the page reach the runtime (snotra goal show --json); a pause from the CLI shows live; the goal node is in the Actors view', async () => {
    const page = app.page;
    await page.click('button[data-tab=goals]');
    await cardStatus('not_started');
    const card = page.locator('[data-testid=goal-card][data-goal="g"]');
    expect(await card.locator('[data-testid=goal-status]').innerText()).toBe('not started');
    expect(await button('start').isDisabled()).toBe(false);
    expect(await button('pause').isDisabled()).toBe(true);
    expect(await button('resume').isDisabled()).toBe(true);
    expect((await goalShow()).status).toBe('not_started');

    // Start: the first iteration's run parks on its shell call (unattended), so the goal stays active.
    await button('start').click();
    await cardStatus('active');
    await until(async () => (await goalShow()).parked === true, 30_000, 'the goal parked');
    await card.locator('.badge.parked').waitFor({ state: 'visible', timeout: 30_000 });
    expect(await card.locator('[data-testid=goal-iterations]').innerText()).toBe('iteration 1/3');
    const usage = await card.locator('[data-testid=goal-usage]').innerText();
    expect(usage).toContain('model calls 0/12');
    // Nothing billed to the goal while its first run is live: its tokens and cost budgets show.
    expect(usage).toContain('tokens 0/400');
    expect(usage).toContain('cost $0.00/$0.05');
    expect(await card.locator('.goal-runs').innerText()).toContain('worker:goal:g:1:1');

    // Pause from the page: the runtime's store says paused.
    await button('pause').click();
    await cardStatus('paused');
    expect(await goalShow()).toMatchObject({ status: 'paused', iteration: 1 });
    expect(await button('resume').isDisabled()).toBe(false);
    expect(await button('pause').isDisabled()).toBe(true);

    // Resume from the page.
    await button('resume').click();
    await cardStatus('active');
    expect((await goalShow()).status).toBe('active');

    // A pause from another surface (the CLI) reaches the page through the events feed, no click.
    await cli('goal', 'pause', 'g');
    await cardStatus('paused');
    await button('resume').click();
    await cardStatus('active');

    // The Actors view: agent → goal → its parked run → the approval, the goal with its counters.
    await page.click('button[data-tab=actors]');
    const goalNode = page.locator('[data-testid=actor-tree] button.actor.kind-goal');
    await goalNode.waitFor({ timeout: 15_000 });
    const nodeText = await goalNode.innerText();
    expect(nodeText).toContain('active.parked');
    expect(nodeText).toContain('iterations 1/3');
    expect(nodeText).toContain('modelCalls 0/12');
    expect(nodeText).toContain('tokens 0/400');
    expect(nodeText).toContain('cost $0.00/$0.05');
    const runUnderGoal = page.locator(
      '[data-testid=actor-tree] li:has(> button.kind-goal) > ul > li > button.kind-run.parked',
    );
    expect(await runUnderGoal.count()).toBe(1);
    expect(await page.locator('[data-testid=actor-tree] button.kind-run').count()).toBe(1);
    await goalNode.click();
    const current = page.locator('.actors [data-testid=machine-graph][data-machine=goal] .state.current');
    await current.waitFor({ timeout: 15_000 });
    expect(await current.getAttribute('data-state')).toBe('goal.active.parked');

    // The terminal view (`snotra inspect`, over the control socket) shows the same goal node and its run under it.
    const term = spawn(process.execPath, [BIN, 'inspect', '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const termExited = new Promise((r) => term.once('exit', r));
    let out = '';
    term.stdout.on('data', (d) => (out += String(d)));
    try {
      await until(async () => out.includes('\n\n'), 30_000, 'the first tree from snotra inspect');
      const lines = out.split('\n');
      const at = lines.findIndex((l) => /[├└]─ g {2}goal {2}active\.parked {2}\(active\) {2}PARKED/.test(l));
      expect(at, out).toBeGreaterThan(0);
      expect(lines[at]).toContain('iterations 1/3');
      expect(lines[at]).toContain('tokens 0/400, cost $0.00/$0.05');
      expect(lines[at + 1]).toMatch(/^ {3}\s*└─ worker:goal:g:1:1 {2}run {2}waiting_for_approval/);
      expect(out).not.toContain('invoices');
    } finally {
      term.kill('SIGTERM');
      await termExited;
    }

    // Cancel from the page: the goal stops, its parked run ends, nothing ran.
    await page.click('button[data-tab=goals]');
    await button('cancel').click();
    await cardStatus('cancelled');
    expect(await goalShow()).toMatchObject({ status: 'cancelled', parked: false });
    expect(await card.locator('[data-testid=goal-status]').innerText()).toBe(
      'cancelled (cancelled_by_human)',
    );
    expect(await button('start').isDisabled()).toBe(false);
    expect(await button('cancel').isDisabled()).toBe(true);
    // What the cancelled run spent is billed to the goal: the card shows it against the budgets.
    await until(
      async () => ((await goalShow()) as { used?: { tokens?: number } }).used?.tokens === 231,
      30_000,
      "the cancelled run's tokens billed to the goal",
    );
    await page.click('button[data-tab=actors]');
    await page.click('button[data-tab=goals]');
    await card
      .locator('[data-testid=goal-usage]', { hasText: 'tokens 231/400 · cost $0.0123/$0.05' })
      .waitFor({ timeout: 30_000 });

    // The buttons' state is only a hint: the runtime itself refuses a pause of a cancelled goal.
    const refused = await call(port, 'POST', '/v1/goals/g/pause', {
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(409);

    // Neither the page nor the actor tree holds the objective.
    expect(await page.locator('body').innerText()).not.toContain('invoices');
    const actors = await call(port, 'GET', '/v1/actors', { headers: { Authorization: `Bearer ${token}` } });
    expect(actors.status).toBe(200);
    expect(actors.text).toContain('"kind":"goal"');
    expect(actors.text).not.toContain('invoices');
  }, 180_000);
});
