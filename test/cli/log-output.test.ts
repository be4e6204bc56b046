import { describe, expect, it } from 'vitest';
import { logOutput } from '../../surfaces/cli/log-output.ts';
import { startSnotra, stopProcess } from '../support/snotra-process.ts';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('log output of the CLI', () => {
  it('JSON lines unless stderr is a terminal; SNOTRA_LOG_FORMAT forces a form', () => {
    expect(logOutput({ isTTY: false }, {})).toBeUndefined();
    expect(logOutput({ isTTY: true }, { SNOTRA_LOG_FORMAT: 'json' })).toBeUndefined();
    expect(logOutput({ isTTY: true }, {})).toBeDefined();
    expect(logOutput({ isTTY: false }, { SNOTRA_LOG_FORMAT: 'pretty' })).toBeDefined();
  });

  it('SNOTRA_LOG_FORMAT=pretty: readable lines on stderr, the ready line on stdout stays JSON', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-logfmt-')));
    try {
      mkdirSync(join(dir, 'project'));
      writeFileSync(
        join(dir, 'snotra.config.json'),
        JSON.stringify({
          stateDir: 'state',
          workspace: { roots: [{ id: 'p', path: 'project', access: 'read-write' }] },
        }),
      );
      const p = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
        SNOTRA_LOG_FORMAT: 'pretty',
        NO_COLOR: '1',
      });
      const ready = await p.ready();
      expect(ready.event).toBe('ready');
      expect(await stopProcess(p)).toBe(0);
      expect(p.stderr()).toMatch(/INFO \(snotra\/\d+\): bus: embedded nats-server started/);
      expect(p.stderr()).not.toContain('{"level"');
      const sidecar = /INFO \(snotra\/\d+\): sidecar listening\n\s+url: "(http:\/\/127\.0\.0\.1:\d+)"/.exec(
        p.stderr(),
      );
      expect(sidecar?.[1]).toBe(ready.sidecar);
      expect(p.stderr()).toMatch(/(INFO|WARN) \(snotra\/\d+\): sandbox: (bubblewrap|none)/);
      // No color codes with NO_COLOR (and none when stderr is not a terminal anyway).
      expect(p.stderr()).not.toContain('\u001b[');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
