import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_CSP, APP_DIR, staticTable } from '../../surfaces/sidecar/static.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { call, configDir } from '../sidecar/client.ts';

const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };
let dir: string;
let snotra: StartedProcess;
let port: number;

beforeAll(async () => {
  dir = configDir(
    { agents: { chatter: { mode: 'ask', model: { provider: 'scripted', script: 'chatter.json' } } } },
    { chatter: [] },
  );
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
  });
  port = Number(new URL((await snotra.ready(30_000)).sidecar as string).port);
}, 60_000);

afterAll(async () => {
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const assets = () => [...staticTable().keys()].filter((p) => p.startsWith('/assets/'));

describe('the web app is served by the sidecar without a token, and nothing else is', () => {
  it('GET / is the committed index.html byte for byte, with the strict CSP, nosniff and no framing', async () => {
    const a = await call(port, 'GET', '/');
    expect(a.status).toBe(200);
    expect(a.text).toBe(readFileSync(join(APP_DIR, 'index.html'), 'utf8'));
    expect(a.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(a.headers['content-security-policy']).toBe(APP_CSP);
    expect(APP_CSP).toContain("default-src 'self'");
    expect(APP_CSP).toContain("frame-ancestors 'none'");
    expect(APP_CSP).not.toContain('unsafe-inline');
    expect(APP_CSP).not.toContain('unsafe-eval');
    expect(a.headers['x-content-type-options']).toBe('nosniff');
    expect(a.headers['x-frame-options']).toBe('DENY');
    expect(a.headers['access-control-allow-origin']).toBeUndefined();
    // No inline script: every script is a file of this origin.
    expect(a.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(a.text).not.toContain(TOKEN);
    const index = await call(port, 'GET', '/index.html');
    expect(index.text).toBe(a.text);
  });

  it('each built asset is served with its type; HEAD gives the headers only', async () => {
    expect(assets().length).toBeGreaterThanOrEqual(2);
    for (const path of assets()) {
      const a = await call(port, 'GET', path);
      expect(a.status, path).toBe(200);
      expect(a.headers['content-type']).toMatch(path.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(a.text).toBe(readFileSync(join(APP_DIR, path.slice(1)), 'utf8'));
      const head = await call(port, 'HEAD', path);
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    }
  });

  it('look-alike paths are not static files: no traversal, no listing, no sources; 401 without the token, 404 with it', async () => {
    const js = assets().find((p) => p.endsWith('.js')) as string;
    for (const path of [
      '/?x=1',
      '/index.html?x=1',
      '/index.html/',
      '//index.html',
      '/./index.html',
      '/assets/../index.html',
      '/%2e%2e/index.html',
      '/%69ndex.html',
      '/INDEX.HTML',
      '/assets',
      '/assets/',
      `/${js.slice(1).toUpperCase()}`,
      `${js}/`,
      `/assets//${js.slice('/assets/'.length)}`,
      '/../package.json',
      '/package.json',
      '/web/src/main.ts',
      '/surfaces/sidecar/app/index.html',
      '/v1',
      '/v1/',
    ]) {
      const a = await call(port, 'GET', path);
      expect(a.status, path).toBe(401);
      expect(a.headers['content-security-policy'], path).toBeUndefined();
      const b = await call(port, 'GET', path, { headers: AUTH });
      expect(b.status, `${path} with token`).toBe(404);
    }
    // Only GET and HEAD: a POST to a static path needs the token like any other request.
    expect(
      (await call(port, 'POST', '/', { headers: { 'Content-Type': 'application/json' }, body: '{}' })).status,
    ).toBe(401);
  });

  it('a wrong Host or Origin is refused before any static file (DNS rebinding gets no page)', async () => {
    expect((await call(port, 'GET', '/', { headers: { Host: `evil.test:${port}` } })).status).toBe(403);
    expect((await call(port, 'GET', '/', { headers: { Origin: 'http://evil.test' } })).status).toBe(403);
  });

  it('/v1 data still needs the token; GET /v1/agents lists ids and modes only', async () => {
    expect((await call(port, 'GET', '/v1/agents')).status).toBe(401);
    const agents = await call(port, 'GET', '/v1/agents', { headers: AUTH });
    expect(agents.json()).toEqual({ agents: [{ id: 'chatter', mode: 'ask' }] });
  });
});

describe('staticTable', () => {
  it('serves only known types by exact path; skips dotfiles, symlinks and other files; an absent folder is an empty table', () => {
    const d = mkdtempSync(join(tmpdir(), 'snotra-static-'));
    try {
      mkdirSync(join(d, 'assets'));
      mkdirSync(join(d, '.git'));
      writeFileSync(join(d, 'index.html'), '<p>x</p>');
      writeFileSync(join(d, 'assets', 'a.js'), 'x');
      writeFileSync(join(d, 'assets', 'a.js.map'), '{}');
      writeFileSync(join(d, '.env'), 'SECRET=1');
      writeFileSync(join(d, '.git', 'config.js'), 'x');
      writeFileSync(join(d, 'notes.txt'), 'x');
      symlinkSync('/etc/passwd', join(d, 'passwd.html'));
      const t = staticTable(d);
      expect([...t.keys()].sort()).toEqual(['/', '/assets/a.js', '/index.html']);
      expect(staticTable(join(d, 'missing')).size).toBe(0);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
