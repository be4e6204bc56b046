import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configDir, until } from '../sidecar/client.ts';
import { procText, startApp, stillRunning } from './app-process.ts';

const dir = configDir(
  { agents: { a: { mode: 'ask', model: { provider: 'scripted', script: 'a.json' } } } },
  { a: [] },
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('snotra app killed with SIGKILL', () => {
  it('its lifeline stops the runtime and the runtime’s tree; Chromium ends with it', async () => {
    const app = await startApp(['--config', join(dir, 'snotra.config.json')]);
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
  }, 120_000);
});
