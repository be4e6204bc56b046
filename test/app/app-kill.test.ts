import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configDir, until } from '../sidecar/client.ts';
import { procText, startApp, stillRunning } from './app-process.ts';

const dir = configDir(
  { agents: { a: { mode: 'ask', model: { provider: 'scripted', script: 'a.json' } } } },
  { a: [] },
);
// The apps' own temp dir: what a killed shell leaves there is this file's, not another run's.
const appTmp = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-app-kill-tmp-')));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(appTmp, { recursive: true, force: true });
});

const profilesIn = (t: string) => readdirSync(t).filter((n) => n.startsWith('snotra-app-profile-'));

describe('snotra app killed with SIGKILL', () => {
  it('its lifeline stops the runtime and the runtime’s tree; Chromium ends with it', async () => {
    const app = await startApp(['--config', join(dir, 'snotra.config.json')], { TMPDIR: appTmp });
    const tree = await app.snapshot();
    // The runtime, its nats-server, the lifeline watcher, Chromium's processes.
    expect(tree.length).toBeGreaterThan(4);
    // The watcher of the lifeline was forked before the token was read: it never held it.
    const runtimeEnv = procText(app.ready.runtimePid).environ;
    const token = runtimeEnv.split('\0').find((e) => e.startsWith('SNOTRA_SIDECAR_TOKEN='));
    expect(token).toBeDefined();
    for (const p of tree)
      if (p.pid !== app.ready.runtimePid)
        expect(procText(p.pid).environ, `environ of ${p.pid}`).not.toContain(token);
    // The window is open and the app running: nothing has stopped it gracefully.
    expect(app.page.isClosed()).toBe(false);
    expect(app.process.child.exitCode).toBeNull();
    expect(app.process.stdout()).not.toContain('app.stopped');
    app.process.child.kill('SIGKILL');
    expect(await app.process.exited).toBe('SIGKILL');
    await until(
      async () => (await stillRunning(app.seen)).length === 0,
      45_000,
      'every process of the tree gone',
    );
    // Nothing could remove the killed shell's Chromium profile: it is still there.
    expect(profilesIn(appTmp)).toEqual([expect.stringMatching(`^snotra-app-profile-${app.process.pid}-`)]);

    // The next launch removes it before it opens its window, and its own goes when it closes.
    const next = await startApp(['--config', join(dir, 'snotra.config.json')], { TMPDIR: appTmp });
    expect(profilesIn(appTmp)).toEqual([expect.stringMatching(`^snotra-app-profile-${next.process.pid}-`)]);
    await next.browser.close().catch(() => {});
    next.process.child.kill('SIGTERM');
    expect(await next.process.exited).toBe(0);
    expect(next.process.stdout()).toContain('app.stopped');
    expect(profilesIn(appTmp)).toEqual([]);
  }, 180_000);
});
