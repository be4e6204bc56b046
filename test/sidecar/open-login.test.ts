import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { snotra as cli } from '../cli/run-helpers.ts';
import { procText, startApp } from '../app/app-process.ts';
import { call, configDir, until } from './client.ts';

const CHROMIUM = process.env.CHROME_PATH ?? '/usr/bin/chromium';
const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };

let dir: string;
let config: string;
let start: StartedProcess;
let port: number;
let browser: Browser;
let approvalId: string;
const urls: string[] = [];

/** A new single-use login URL from `snotra open --print`. */
function openPrint(): string {
  const r = cli(['open', '--print', '--config', config]);
  expect(r.status, r.stderr).toBe(0);
  const url = r.stdout.trim();
  urls.push(url);
  return url;
}

beforeAll(async () => {
  const fireAt = new Date(Date.now() + 2500).toISOString().replace(/\.\d+Z$/, '');
  dir = configDir(
    {
      agents: { worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } } },
      surfaces: {
        scheduled: [{ id: 'nightly', agent: 'worker', cron: fireAt, message: 'write', missed: 'run-once' }],
      },
    },
    {
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content: 'hello' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'written' } },
      ],
    },
  );
  config = join(dir, 'snotra.config.json');
  start = startSnotra(['start', '--config', config], { SNOTRA_SIDECAR_TOKEN: TOKEN });
  port = Number(new URL((await start.ready(60_000)).sidecar as string).port);
  approvalId = (
    await until(
      async () =>
        ((await call(port, 'GET', '/v1/inbox', { headers: AUTH })).json() as { approvals: { id: string }[] })
          .approvals[0],
      30_000,
      'a parked approval',
    )
  ).id;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
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
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (start !== undefined) await stopProcess(start);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('snotra open: a single-use login code exchanged for a cookie of this launch', () => {
  let session = '';

  it('the code logs a real browser in once: HttpOnly SameSite=Strict cookie, the web app reads the Inbox and decides with it', async () => {
    const url = openPrint();
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/login\\?code=[A-Za-z0-9_-]{43}$`));
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const answer = await page.goto(url);
      expect(answer?.status()).toBe(200);
      // Sent on to the app: the code is no longer in the address bar.
      expect(page.url()).toBe(`http://127.0.0.1:${port}/`);
      const cookies = await context.cookies();
      expect(cookies).toHaveLength(1);
      const cookie = cookies[0] as (typeof cookies)[number];
      expect(cookie).toMatchObject({ name: 'snotra_session', httpOnly: true, sameSite: 'Strict', path: '/' });
      expect(cookie.value).not.toBe(TOKEN);
      session = cookie.value;
      // The page's script cannot read it.
      expect(await page.evaluate('document.cookie')).toBe('');
      // The web app itself renders the parked approval card (its /v1 requests carry the cookie).
      await page
        .locator(`[data-approval="${approvalId}"]`)
        .first()
        .waitFor({ state: 'attached', timeout: 30_000 });
      // And a decision made with the cookie (a same-origin POST: Origin sent) is recorded.
      const status = await page.evaluate(
        async (id) =>
          (
            await fetch(`/v1/inbox/${encodeURIComponent(id)}/decision`, {
              method: 'POST',
              credentials: 'same-origin',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ decision: 'approve' }),
            })
          ).status,
        approvalId,
      );
      expect(status).toBe(200);
    } finally {
      await context.close();
    }
    const runs = await until(
      async () => {
        const a = (
          await call(port, 'GET', `/v1/inbox/${encodeURIComponent(approvalId)}`, { headers: AUTH })
        ).json() as {
          status?: string;
          approval?: { status?: string };
        };
        const s = a.approval?.status ?? a.status;
        return s === 'approved' ? s : undefined;
      },
      30_000,
      'the approval decided through the cookie session',
    );
    expect(runs).toBe('approved');
  });

  it('a code used once is refused the second time (401), in another browser too', async () => {
    const url = urls[0] as string;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const answer = await page.goto(url);
      expect(answer?.status()).toBe(401);
      expect(await page.content()).toContain('login_code_invalid');
      expect(await context.cookies()).toHaveLength(0);
    } finally {
      await context.close();
    }
    // A made-up code, an empty one and two codes at once are refused alike.
    for (const path of ['/login?code=AAAA', '/login?code=', '/login', `/login?code=x&code=y`]) {
      const r = await call(port, 'GET', path);
      expect(r.status, path).toBe(401);
      expect(r.headers['set-cookie'], path).toBeUndefined();
    }
  });

  it('a login URL opened from another site is refused and spends nothing', async () => {
    const url = openPrint();
    const path = new URL(url).pathname + new URL(url).search;
    const r = await call(port, 'GET', path, { headers: { 'Sec-Fetch-Site': 'same-site' } });
    expect(r.status).toBe(403);
    expect(r.headers['set-cookie']).toBeUndefined();
    const ok = await call(port, 'GET', path, { headers: { 'Sec-Fetch-Site': 'none' } });
    expect(ok.status).toBe(303);
    expect(String(ok.headers['set-cookie'])).toMatch(
      /^snotra_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/$/,
    );
  });

  it('the cookie counts only with its own Origin and Host: every other context gets the refusal it got before', async () => {
    const cookie = `snotra_session=${session}`;
    expect((await call(port, 'GET', '/v1/inbox', { headers: { Cookie: cookie } })).status).toBe(200);
    const refused: Array<[string, Record<string, string>, number]> = [
      ['another loopback port', { Origin: 'http://127.0.0.1:9', Cookie: cookie }, 403],
      ['a name for loopback (DNS rebinding)', { Host: `evil.test:${port}`, Cookie: cookie }, 403],
      [
        'localhost origin (allowed for the token, not the cookie)',
        { Origin: `http://localhost:${port}`, Cookie: cookie },
        401,
      ],
      [
        'same-site fetch from another port (no Origin on a GET)',
        { 'Sec-Fetch-Site': 'same-site', Cookie: cookie },
        401,
      ],
      ['cross-site', { 'Sec-Fetch-Site': 'cross-site', Cookie: cookie }, 401],
      ['the cookie twice', { Cookie: `${cookie}; snotra_session=x` }, 401],
      ['a made-up session', { Cookie: 'snotra_session=AAAA' }, 401],
      ['the token as the cookie', { Cookie: `snotra_session=${TOKEN}` }, 401],
      ['no cookie, no token', {}, 401],
    ];
    for (const [name, headers, status] of refused) {
      const r = await call(port, 'GET', '/v1/inbox', { headers });
      expect(r.status, name).toBe(status);
      expect(r.text, name).not.toContain('approvals');
    }
    // A wrong bearer token next to a good cookie is not rescued by it.
    const wrong = await call(port, 'GET', '/v1/inbox', {
      headers: { Cookie: cookie, Authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
  });

  it('the launch token is in no URL, no output and no log; no login code is logged either', () => {
    for (const url of urls) expect(url).not.toContain(TOKEN);
    const logs = start.stdout() + start.stderr();
    expect(logs).not.toContain(TOKEN);
    for (const url of urls) expect(logs).not.toContain(new URL(url).searchParams.get('code') as string);
  });

  it('snotra app beside the running start joins it: its window logs in by a code, never holds the token, and closing it leaves the runtime running', async () => {
    const app = await startApp(['--config', config]);
    try {
      expect(app.ready).toMatchObject({
        runtimePid: start.pid,
        sidecar: `http://127.0.0.1:${port}`,
        joined: true,
      });
      await until(() => app.page.url() === `http://127.0.0.1:${port}/`, 30_000, 'the window on the app');
      const status = await app.page.evaluate(
        async () => (await fetch('/v1/inbox', { credentials: 'same-origin' })).status,
      );
      expect(status).toBe(200);
      const proc = procText(app.process.pid);
      expect(proc.cmdline + proc.environ).not.toContain(TOKEN);
    } finally {
      await app.browser.close().catch(() => {});
      app.process.child.kill('SIGTERM');
    }
    const code = await app.process.exited;
    expect(code, app.process.stderr()).toBe(0);
    expect(app.process.stdout()).toContain('"event":"app.stopped","runtime":"joined"');
    expect((await call(port, 'GET', '/health')).status).toBe(200);
    expect(start.child.exitCode).toBeNull();
  });

  it('with no runtime on the state dir, snotra open says so (exit 1, not_running)', () => {
    const empty = mkdtempSync(join(tmpdir(), 'snotra-open-none-'));
    try {
      const r = cli(['open', '--print', '--state-dir', empty]);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/no runtime runs on state dir .*snotra start/);
      expect(r.stdout).toBe('');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
