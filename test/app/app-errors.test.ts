import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumEnv, displayProblem, isApiRequest } from '../../surfaces/app/window.ts';
import { startSnotra } from '../support/snotra-process.ts';
import { configDir } from '../sidecar/client.ts';

const dir = configDir(
  { agents: { a: { mode: 'ask', model: { provider: 'scripted', script: 'a.json' } } } },
  { a: [] },
);
const config = join(dir, 'snotra.config.json');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('snotra app: clear errors before anything starts', () => {
  it('a missing Chromium names the install command and CHROME_PATH; no runtime was started', async () => {
    const p = startSnotra(['app', '--headless', '--config', config], {
      CHROME_PATH: join(dir, 'no-such-chrome'),
    });
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('apt-get install -y chromium');
    expect(p.stderr()).toContain('CHROME_PATH');
    expect(p.stderr()).toContain('no-such-chrome');
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('the test-only DevTools endpoint is refused for a visible window', async () => {
    const p = startSnotra(['app', '--config', config], { SNOTRA_APP_DEVTOOLS: '1' });
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('SNOTRA_APP_DEVTOOLS=1 is for tests and needs --headless');
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('a visible window with no display says to use --headless, not the launch error of Chromium', async () => {
    const p = startSnotra(['app', '--config', config], { DISPLAY: '', WAYLAND_DISPLAY: '' });
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('no display to open the app window on');
    expect(p.stderr()).toContain('snotra app --headless');
    expect(p.stderr()).not.toContain('Playwright');
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('an unknown flag is a usage error; --help shows the flags and examples', async () => {
    const bad = startSnotra(['app', '--headles']);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toContain('did you mean "--headless"?');
    const help = startSnotra(['app', '--help']);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toContain('--headless');
    expect(help.stdout()).toContain('$ snotra app --config ./snotra.config.json');
  });
});

describe('isApiRequest: only the sidecar origin’s /v1 requests get the token', () => {
  const origin = 'http://127.0.0.1:4000';
  it.each([
    ['http://127.0.0.1:4000/v1/inbox', true],
    ['http://127.0.0.1:4000/v1/runs/a%3Ab/audit', true],
    ['http://127.0.0.1:4000/', false],
    ['http://127.0.0.1:4000/assets/index.js', false],
    ['http://127.0.0.1:4000/v1', false],
    ['http://localhost:4000/v1/inbox', false],
    ['http://127.0.0.1:4001/v1/inbox', false],
    ['https://127.0.0.1:4000/v1/inbox', false],
    ['http://evil.test/v1/inbox', false],
    ['http://127.0.0.1:4000.evil.test/v1/inbox', false],
    ['http://user@127.0.0.1:4000@evil.test/v1/inbox', false],
    ['ws://127.0.0.1:4000/v1/ws', false],
  ])('%s → %s', (url, expected) => {
    expect(isApiRequest(url, origin)).toBe(expected);
  });
});

describe('chromiumEnv: the child allowlist and the desktop session, nothing else', () => {
  it('keeps PATH, HOME, LC_*, DISPLAY and the like; drops secrets, keys, proxies and the token', () => {
    const env = chromiumEnv(
      {
        PATH: '/usr/bin',
        HOME: '/home/u',
        LC_ALL: 'C.UTF-8',
        DISPLAY: ':0',
        WAYLAND_DISPLAY: 'wayland-0',
        XDG_RUNTIME_DIR: '/run/user/1000',
        DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
        SNOTRA_SIDECAR_TOKEN: 'x'.repeat(43),
        SNOTRA_SECRET_OPENAI: 'sk-1',
        OPENAI_API_KEY: 'sk-2',
        GITHUB_TOKEN: 'ghp',
        http_proxy: 'http://proxy:3128',
        NODE_OPTIONS: '--require /tmp/x.js',
        LD_PRELOAD: '/tmp/x.so',
        // Look-alikes of allowed names.
        PATHX: '1',
        path: '/tmp',
        DISPLAY_TOKEN: 'd',
      },
      'linux',
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/u',
      LC_ALL: 'C.UTF-8',
      DISPLAY: ':0',
      WAYLAND_DISPLAY: 'wayland-0',
      XDG_RUNTIME_DIR: '/run/user/1000',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
    });
  });

  it('on Windows: its allowlist, names compared case-insensitively', () => {
    expect(
      chromiumEnv({ Path: 'C:\\Windows', SystemRoot: 'C:\\Windows', OPENAI_API_KEY: 'k' }, 'win32'),
    ).toEqual({
      Path: 'C:\\Windows',
      SystemRoot: 'C:\\Windows',
    });
  });
});

describe('displayProblem: a visible window needs a display on Linux', () => {
  it.each([
    [false, {}, 'linux', true],
    [false, { DISPLAY: '' }, 'linux', true],
    [false, { DISPLAY: '  ', WAYLAND_DISPLAY: '' }, 'freebsd', true],
    [false, { DISPLAY: ':0' }, 'linux', false],
    [false, { WAYLAND_DISPLAY: 'wayland-0' }, 'linux', false],
    [true, {}, 'linux', false],
    [false, {}, 'darwin', false],
    [false, {}, 'win32', false],
  ] as const)('headless %s, env %j, %s → a problem: %s', (headless, env, platform, problem) => {
    const found = displayProblem(headless, env, platform);
    expect(found !== null).toBe(problem);
    if (problem) expect(found).toContain('--headless');
  });
});
