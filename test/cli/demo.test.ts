import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;

describe('snotra demo', () => {
  it('walks chat → Explorer → approval → park → restart → resume once → audit, and every step holds', () => {
    const r = spawnSync(process.execPath, [BIN, 'demo'], {
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('FAIL');
    for (const line of [
      'ok   Explorer mapped the workspace',
      'ok   Explorer tried to write and was refused',
      'ok   parked: Inbox',
      'ok   task: "Report written."',
      'ok   another restart re-runs nothing',
      'ok   audit chain verified',
      'demo finished: every step behaved as expected',
    ]) {
      expect(r.stdout).toContain(line);
    }
    const kinds = [...r.stdout.matchAll(/#\d+ (\w+)/g)].map((m) => m[1]);
    expect(kinds).toEqual([
      'proposed',
      'policy_decided',
      'approval_requested',
      'approval_resolved',
      'started',
      'completed',
    ]);
  }, 150_000);
});
