// Another origin cannot use the app's files: no framing (CSP frame-ancestors, X-Frame-Options),
// no loading its script or style cross-origin (Cross-Origin-Resource-Policy: same-origin).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticTable } from '../../surfaces/sidecar/static.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { configDir, until } from '../sidecar/client.ts';

let dir: string;
let snotra: StartedProcess;
let sidecar: string;
let hostile: Server;
let hostileUrl: string;
let browser: Browser;

beforeAll(async () => {
  dir = configDir(
    { agents: { a: { mode: 'ask', model: { provider: 'scripted', script: 'a.json' } } } },
    { a: [] },
  );
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: randomBytes(32).toString('base64url'),
  });
  sidecar = (await snotra.ready(30_000)).sidecar as string;
  const js = [...staticTable().keys()].find((p) => p.endsWith('.js')) as string;
  const css = [...staticTable().keys()].find((p) => p.endsWith('.css')) as string;
  hostile = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><body>
<iframe id="f" src="${sidecar}/"></iframe>
<script>
window.results = {};
const s = document.createElement('script');
s.type = 'module';
s.src = '${sidecar}${js}';
s.onload = () => (window.results.script = 'loaded');
s.onerror = () => (window.results.script = 'blocked');
document.head.appendChild(s);
const l = document.createElement('link');
l.rel = 'stylesheet';
l.href = '${sidecar}${css}';
l.onload = () => (window.results.style = 'loaded');
l.onerror = () => (window.results.style = 'blocked');
document.head.appendChild(l);
</script></body>`);
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  hostileUrl = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/`;
  browser = await chromium.launch({
    executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  hostile?.close();
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the app’s files on another origin', () => {
  it('cannot be framed, and its script and style cannot be loaded', async () => {
    const page = await browser.newPage();
    try {
      const blockedFrames: string[] = [];
      page.on('console', (m) => {
        if (/frame-ancestors|X-Frame-Options|Refused to display/i.test(m.text()))
          blockedFrames.push(m.text());
      });
      await page.goto(hostileUrl);
      const results = await until(
        async () => {
          const r = (await page.evaluate('window.results')) as { script?: string; style?: string };
          return r.script !== undefined && r.style !== undefined ? r : undefined;
        },
        15_000,
        'the load attempts',
      );
      expect(results).toEqual({ script: 'blocked', style: 'blocked' });
      // The frame shows Chromium's error page, never the app.
      await until(() => blockedFrames.length > 0, 15_000, 'the refused frame');
      const frame = page.frames().find((f) => f !== page.mainFrame());
      expect(frame?.url() ?? '').not.toBe(`${sidecar}/`);
    } finally {
      await page.close();
    }
  }, 60_000);
});
