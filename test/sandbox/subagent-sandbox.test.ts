/**
 * A sub-agent's sandbox mounts its own envelope, not its parent's: a helper given only
 * `project/sub` cannot write elsewhere in the parent's writable root, even through a script the
 * analyzer cannot see into; inside its own root it works.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  fx = null;
});

const call = (id: string, tool: string, args: unknown) => ({
  kind: 'calls' as const,
  calls: [{ id, tool, args }],
});

describe('sub-agent sandbox', () => {
  it("mounts the child's roots: writes in its own root land, writes elsewhere in the parent's root fail", async () => {
    fx = runtimeFixture({
      agents: { lead: { mode: 'allow' }, helper: { mode: 'allow', tools: ['write_file', 'shell'] } },
    });
    const sub = join(fx.project, 'sub');
    mkdirSync(sub);
    writeFileSync(join(fx.project, 'parent.txt'), 'parent data\n');
    const probe = [
      `R="${sub}/report.txt"`,
      `: > "$R"`,
      `if echo mine > "${sub}/child-ok.txt" 2>/dev/null; then echo own-root=ok >> "$R"; else echo own-root=refused >> "$R"; fi`,
      `if echo pwned > "${fx.project}/parent-only.txt" 2>/dev/null; then echo parent-root=ok >> "$R"; else echo parent-root=refused >> "$R"; fi`,
      `if echo pwned >> "${fx.project}/parent.txt" 2>/dev/null; then echo parent-file=ok >> "$R"; else echo parent-file=refused >> "$R"; fi`,
      `echo probe-done`,
    ].join('\n');
    const model = new ScriptedModel({
      lead: [
        {
          respond: call('s1', 'spawn_agent', {
            profile: 'helper',
            task: 'probe',
            tools: ['write_file', 'shell'],
            roots: [{ path: sub, access: 'read-write' }],
          }),
        },
        { expect: { kind: 'tool.result', tool: 'spawn_agent' }, respond: { kind: 'final', text: 'done' } },
      ],
      helper: [
        { respond: call('h1', 'write_file', { path: join(sub, 'probe.sh'), content: probe }) },
        {
          expect: { kind: 'tool.result', tool: 'write_file' },
          respond: call('h2', 'shell', { command: 'sh probe.sh', cwd: sub }),
        },
        {
          expect: { kind: 'tool.result', contains: 'probe-done' },
          respond: { kind: 'final', text: 'probed' },
        },
      ],
    });
    rt = await fx.start(model);
    const { runId, outcome } = await rt.chat('lead', 'delegate the probe');
    const lead = runtimeInternals(rt).store.snapshots.get(runId)?.snapshot as {
      context?: { transcript?: unknown };
    };
    expect(outcome, JSON.stringify([outcome, lead?.context?.transcript])).toMatchObject({
      status: 'completed',
      text: 'done',
    });
    expect(readFileSync(join(sub, 'report.txt'), 'utf8')).toBe(
      'own-root=ok\nparent-root=refused\nparent-file=refused\n',
    );
    expect(readFileSync(join(sub, 'child-ok.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(fx.project, 'parent-only.txt'))).toBe(false);
    expect(readFileSync(join(fx.project, 'parent.txt'), 'utf8')).toBe('parent data\n');
  });
});
