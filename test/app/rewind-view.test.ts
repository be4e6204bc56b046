// The web app's Rewind action (issue 38) in Chromium against a real runtime and its sidecar: in a
// run's conversation, a shell call's Rewind shows the checkpoint before it, the diff first (the
// files unchanged), then the rewind on an explicit click (the files back, audited through the
// sidecar), and its undo the same way.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { startSidecar, type Sidecar } from '../../surfaces/sidecar/server.ts';
import { treeOf } from '../checkpoints/support.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

const TOKEN = 'W'.repeat(16) + 'abcdefghijklmnopqrstuvwxyz012345';
let fx: RuntimeFixture;
let rt: Runtime;
let sidecar: Sidecar;
let browser: Browser;
let page: Page;
let runId = '';
let initial: Record<string, string>;
let afterRun: Record<string, string>;

beforeAll(async () => {
  fx = runtimeFixture({ agents: { editor: { mode: 'allow' } } });
  const p = fx.project;
  writeFileSync(join(p, 'a.txt'), 'one\n');
  initial = treeOf(p);
  const model = new ScriptedModel({
    editor: [
      {
        respond: {
          kind: 'calls',
          calls: [
            {
              id: 's1',
              tool: 'shell',
              args: { command: 'sed -i s/one/ONE/ a.txt && echo new > n.txt', cwd: p },
            },
          ],
        },
      },
      { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'edited' } },
    ],
  });
  rt = await fx.start(model);
  sidecar = await startSidecar({ runtime: rt, token: TOKEN, port: 0, allowedOrigins: [] });
  const result = await rt.chat('editor', 'edit');
  expect(result.outcome).toMatchObject({ status: 'completed' });
  runId = result.runId;
  afterRun = treeOf(p);
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
  page = await browser.newPage();
  await page.goto(sidecar.loginUrl());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sidecar?.close();
  await rt?.stop();
  fx?.cleanup();
});

describe('the web app’s Rewind action', () => {
  it('shows the diff first, rewinds on the explicit click (audited through the sidecar), and undoes', async () => {
    await page.click('nav button[data-tab=runs]');
    await page.locator(`[data-testid=run-list] li[data-key="${runId}"]`).click();
    const box = page.locator('[data-testid=conversation] [data-testid=rewind]').first();
    await box.locator('summary').click();
    await box.locator('[data-testid=rewind-preview]').click();
    const diff = box.locator('[data-testid=rewind-diff]');
    await diff.waitFor({ timeout: 15_000 });
    const text = await diff.innerText();
    expect(text).toContain('project:a.txt');
    expect(text).toContain('project:n.txt');
    expect(text).toMatch(/-ONE\s+\+one/);
    expect(treeOf(fx.project)).toEqual(afterRun);

    await box.locator('[data-testid=rewind-confirm]').click();
    await box.locator('[data-testid=rewind-done]').waitFor({ timeout: 15_000 });
    expect(treeOf(fx.project)).toEqual(initial);
    const events = runtimeInternals(rt)
      .store.audit.list()
      .filter((e) => e.kind === 'rewind');
    expect(events).toEqual([expect.objectContaining({ runId, surface: 'sidecar', status: 'restored' })]);

    await box.locator('[data-testid=rewind-undo]').click();
    await box.locator('[data-testid=rewind-confirm]').click();
    await box.locator('[data-testid=rewind-done]', { hasText: 'back (undo)' }).waitFor({ timeout: 15_000 });
    expect(treeOf(fx.project)).toEqual(afterRun);
  });
});
