import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isApiRequest } from '../../surfaces/app/window.ts';
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
  }, 30_000);

  it('the test-only DevTools endpoint is refused for a visible window', async () => {
    const p = startSnotra(['app', '--config', config], { SNOTRA_APP_DEVTOOLS: '1' });
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('SNOTRA_APP_DEVTOOLS=1 is for tests and needs --headless');
    expect(existsSync(join(dir, 'state'))).toBe(false);
  }, 30_000);

  it('an unknown flag is a usage error; --help shows the flags and examples', async () => {
    const bad = startSnotra(['app', '--headles']);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toContain('did you mean "--headless"?');
    const help = startSnotra(['app', '--help']);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toContain('--headless');
    expect(help.stdout()).toContain('$ snotra app --config ./snotra.config.json');
  }, 30_000);
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
