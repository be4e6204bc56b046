import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { APP_DIR } from '../../surfaces/sidecar/static.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((n) => /\.[a-z]+$/.test(n))
    .sort();
}

describe('the committed web app build', () => {
  it('is what `npm run build:web` builds from web/ now (rebuilt into a temp dir: identical files and bytes)', async () => {
    const out = mkdtempSync(join(tmpdir(), 'snotra-web-build-'));
    try {
      await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'web/vite.config.ts'],
        { cwd: ROOT, env: { ...process.env, SNOTRA_WEB_OUT: out } },
      );
      const built = files(out);
      expect(built).toEqual(files(APP_DIR));
      expect(built).toContain('index.html');
      for (const f of built)
        expect(readFileSync(join(out, f)).equals(readFileSync(join(APP_DIR, f))), f).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);

  it('the bundle reads no URL, message or storage and writes no HTML: its endpoints are the fixed same-origin /v1 paths', () => {
    const js = files(APP_DIR)
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(APP_DIR, f), 'utf8'))
      .join('\n');
    expect(js.length).toBeGreaterThan(1000);
    for (const banned of [
      'location',
      'localStorage',
      'sessionStorage',
      'indexedDB',
      'cookie',
      'postMessage',
      'addEventListener(`message`',
      'innerHTML',
      'outerHTML',
      'insertAdjacentHTML',
      'document.write',
      'EventSource',
      'WebSocket',
      'eval(',
      'http://',
      'https://',
      'ws://',
    ])
      expect(js, banned).not.toContain(banned);
    // The benign look-alike: the fixed API paths are there.
    expect(js).toContain('/v1/inbox');
    expect(js).toContain('/v1/events');
  });
});
