/**
 * A sandbox probe is a promise about later, not a guarantee: `snotra policy check` (and the
 * runtime) remember "bubblewrap works" for the life of the process. When bwrap then fails to
 * start a sandbox for a real command, the command does not run at all — never unconfined — and
 * the call fails with bwrap's error.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createShellExecutor } from '../../actors/tools/shell.ts';
import { ToolError } from '../../actors/tools/types.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { createPolicyChecker } from '../../runtime/policy/checker.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createBubblewrapSandbox, hostRulesOf } from '../../runtime/sandbox/index.ts';
import { createTestWorkspace } from '../tools/support.ts';

describe('a remembered "bubblewrap works" that no longer holds', () => {
  it('lets the policy allow the call, and the executor still runs nothing outside a sandbox', async () => {
    const ws = createTestWorkspace();
    // A bwrap that has stopped working since the probe (user namespaces switched off, say).
    const bin = join(ws.dir, 'bin');
    mkdirSync(bin);
    const broken = join(bin, 'bwrap');
    writeFileSync(broken, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
    chmodSync(broken, 0o755);
    let probes = 0;
    const loaded = parseConfig(
      JSON.stringify({
        stateDir: 'state',
        workspace: { roots: [{ id: 'root', path: 'root', access: 'read-write', primary: true }] },
        agents: { assistant: { mode: 'allow' } },
      }),
      join(ws.dir, 'snotra.config.json'),
      ws.dir,
    );
    const checker = await createPolicyChecker(loaded, {
      lazyShell: true,
      // What the process remembered from a probe that succeeded earlier.
      detectSandbox: () => {
        probes++;
        return { name: 'bubblewrap', program: broken };
      },
    });
    const marker = join(ws.root, 'marker.txt');
    const args = { command: `echo x > ${marker}` };
    expect(await checker.decide('assistant', { tool: 'shell', args })).toMatchObject({
      decision: 'allow',
      reason: 'mode_allow',
    });
    await checker.decide('assistant', { tool: 'shell', args: { command: 'ls' } });
    expect(probes).toBe(1);

    const sandbox = createBubblewrapSandbox({ bwrap: broken, rules: hostRulesOf(ws.guard) });
    const supervisor = new ProcessSupervisor({ killGraceMs: 300, sandbox });
    try {
      const shell = createShellExecutor({ runner: supervisor });
      const error = await shell.execute(args, ws.context(ws.decide('shell', args))).then(
        () => null,
        (e: unknown) => e,
      );
      // The call fails with bwrap's own error; the command itself never ran.
      expect(error).toBeInstanceOf(ToolError);
      expect((error as ToolError).code).toBe('command_failed');
      expect(JSON.stringify((error as ToolError).details)).toContain('setting up uid map');
      expect(existsSync(marker)).toBe(false);
    } finally {
      await supervisor.shutdown();
      ws.cleanup();
    }
  });
});
