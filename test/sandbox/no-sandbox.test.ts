/**
 * Where no OS sandbox is available, `allow` mode never runs a shell command unconfined on its
 * own: the policy asks a human (`sandbox_unavailable`), through the real runtime and through
 * `snotra policy check`'s checker; the executor refuses a `mode_allow` call without a sandbox.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { createShellExecutor } from '../../actors/tools/shell.ts';
import { ToolError } from '../../actors/tools/types.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { createPolicyChecker } from '../../runtime/policy/checker.ts';
import { createPolicyEnvironment } from '../../runtime/policy/environment.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { detectSandbox } from '../../runtime/sandbox/index.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { createTestWorkspace } from '../tools/support.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const NONE = () => ({ name: 'none' as const, reason: 'no sandbox in this test' });

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  fx = null;
});

function shellScript(command: string) {
  return new ScriptedModel({
    assistant: [
      { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'shell', args: { command } }] } },
      { expect: { kind: 'tool.result', contains: 'ran-unconfined' }, respond: { kind: 'final', text: 'ok' } },
    ],
  });
}

describe('no OS sandbox', () => {
  it('asks a human for an allow-mode shell call (sandbox_unavailable); once approved it runs', async () => {
    fx = runtimeFixture({ agents: { assistant: { mode: 'allow' } } });
    rt = await fx.start(shellScript('echo ran-unconfined > marker.txt && echo ran-unconfined'), {
      detectSandbox: NONE,
    });
    expect(runtimeInternals(rt).policyEnv.sandbox).toEqual({
      name: 'none',
      reason: 'no sandbox in this test',
    });
    const asked: string[] = [];
    rt.onApproval((a) => {
      asked.push(`${a.tool}:${a.reason}`);
      expect(existsSync(join(fx!.project, 'marker.txt'))).toBe(false);
      setTimeout(() => rt?.decide(a.id, 'approved', 'alice'), 0);
    });
    const { outcome } = await rt.chat('assistant', 'run it');
    expect(outcome).toMatchObject({ status: 'completed', text: 'ok' });
    expect(asked).toEqual(['shell:sandbox_unavailable']);
    expect(readFileSync(join(fx.project, 'marker.txt'), 'utf8')).toBe('ran-unconfined\n');
  });

  it('with a sandbox the same call runs without a human', async () => {
    fx = runtimeFixture({ agents: { assistant: { mode: 'allow' } } });
    rt = await fx.start(shellScript('echo ran-unconfined'));
    expect(runtimeInternals(rt).policyEnv.sandbox.name).toBe('bubblewrap');
    const asked: string[] = [];
    rt.onApproval((a) => asked.push(a.reason));
    const { outcome } = await rt.chat('assistant', 'run it');
    expect(outcome).toMatchObject({ status: 'completed', text: 'ok' });
    expect(asked).toEqual([]);
  });

  it('policy check: shell is sandbox_unavailable in allow mode, mode_ask in ask mode, deny in deny mode; other tools are unaffected', async () => {
    const dir = createTestWorkspace();
    try {
      for (const [mode, decision, reason] of [
        ['allow', 'approval-required', 'sandbox_unavailable'],
        ['ask', 'approval-required', 'mode_ask'],
        ['deny', 'deny', 'mode_deny'],
      ] as const) {
        const loaded = parseConfig(
          JSON.stringify({
            stateDir: 'state',
            workspace: { roots: [{ id: 'root', path: 'root', access: 'read-write', primary: true }] },
            agents: { assistant: { mode } },
          }),
          join(dir.dir, 'snotra.config.json'),
          dir.dir,
        );
        const none = await createPolicyChecker(loaded, { detectSandbox: NONE });
        expect(none.check('assistant', { tool: 'shell', args: { command: 'ls' } })).toMatchObject({
          decision,
          reason,
          humanRequired: decision === 'approval-required',
        });
        if (mode === 'allow') {
          expect(
            none.check('assistant', { tool: 'write_file', args: { path: 'a.txt', content: 'x' } }),
          ).toMatchObject({ decision: 'allow', reason: 'mode_allow' });
          expect(none.check('assistant', { tool: 'git_query', args: { args: ['status'] } })).toMatchObject({
            decision: 'allow',
          });
          // A hardline command stays a denial: no sandbox question is asked first.
          expect(none.check('assistant', { tool: 'shell', args: { command: 'rm -rf /' } })).toMatchObject({
            decision: 'deny',
            reason: 'hardline_command',
          });
          const real = await createPolicyChecker(loaded);
          expect(real.check('assistant', { tool: 'shell', args: { command: 'ls' } })).toMatchObject({
            decision: 'allow',
            reason: 'mode_allow',
          });
        }
      }
    } finally {
      dir.cleanup();
    }
  });

  it('the shell executor refuses a call the policy allowed on its own when the runner has no sandbox', async () => {
    const ws = createTestWorkspace();
    const supervisor = new ProcessSupervisor({ killGraceMs: 300 });
    try {
      const args = { command: `echo x > ${join(ws.root, 'marker.txt')}` };
      const shell = createShellExecutor({ runner: supervisor });
      const error = await shell.execute(args, ws.context(ws.decide('shell', args))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ToolError);
      expect((error as ToolError).code).toBe('sandbox_unavailable');
      expect(existsSync(join(ws.root, 'marker.txt'))).toBe(false);
      // Approved by a human (any other reason), it runs.
      const approved = {
        ...ws.decide('shell', args),
        decision: 'approval-required' as const,
        reason: 'sandbox_unavailable' as const,
      };
      await shell.execute(args, ws.context(approved));
      expect(existsSync(join(ws.root, 'marker.txt'))).toBe(true);
    } finally {
      await supervisor.shutdown();
      ws.cleanup();
    }
  });

  it('the detector reports a missing bwrap with the install hint, and a failing one with its error', () => {
    expect(detectSandbox({ platform: 'linux', candidates: ['/nonexistent/bwrap'] })).toEqual({
      name: 'none',
      reason: 'bubblewrap (bwrap) is not installed; install it: apt-get install -y bubblewrap',
    });
    const broken = detectSandbox({
      platform: 'linux',
      candidates: ['/usr/bin/bwrap'],
      probe: () => 'setting up uid map: Permission denied',
    });
    expect(broken).toEqual({
      name: 'none',
      reason:
        'bubblewrap at /usr/bin/bwrap cannot start a sandbox here: setting up uid map: Permission denied',
    });
    expect(detectSandbox({ platform: 'darwin' }).name).toBe('none');
    expect(detectSandbox({ platform: 'win32' }).name).toBe('none');
    expect(detectSandbox()).toEqual({ name: 'bubblewrap', program: '/usr/bin/bwrap' });
  });

  it('createPolicyEnvironment builds no backend without a sandbox', async () => {
    const ws = createTestWorkspace();
    try {
      const loaded = parseConfig(
        JSON.stringify({
          stateDir: 'state',
          workspace: { roots: [{ id: 'root', path: 'root', access: 'read-write', primary: true }] },
        }),
        join(ws.dir, 'snotra.config.json'),
        ws.dir,
      );
      expect((await createPolicyEnvironment(loaded, { detectSandbox: NONE })).sandboxBackend).toBeNull();
      expect((await createPolicyEnvironment(loaded)).sandboxBackend?.name).toBe('bubblewrap');
    } finally {
      ws.cleanup();
    }
  });
});
