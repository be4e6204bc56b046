/**
 * The checkpoint sits between a call's `started` row and its tool (issue 38): it is taken before
 * the tool runs, and a checkpoint that cannot be taken fails the call (`checkpoint_failed`)
 * without running it; a read-only call takes none.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executeOnce, type ExecuteDeps } from '../../actors/run/execute.ts';
import { toObservation } from '../../actors/tools/index.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { Checkpointer } from '../../runtime/checkpoints/index.ts';
import { allowDecision, openTemp } from '../store/helpers.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-before-run-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function deps(root: string, state: string, log: string[]): ExecuteDeps {
  const { store } = openTemp();
  const checkpoints = new Checkpointer(state, () => 1_700_000_000_000);
  const roots: WorkspaceRoot[] = [
    { id: 'p', path: root, access: 'read-write', primary: true, source: 'workspace' },
  ];
  const run = (name: string) => ({
    async execute() {
      log.push(`${name} ran`);
      return { ok: true };
    },
  });
  return {
    store,
    registry: ToolRegistry.withBuiltins(),
    executors: { write_file: run('write_file'), read_file: run('read_file') },
    contextFor: () => ({}) as never,
    observe: (outcome) => toObservation(outcome, store.redactor),
    runMeta: () => ({ sessionId: 's', agentId: 'a', surface: 'cli' }),
    beforeRun: (call) => {
      const taken = checkpoints.beforeCall(call, call.decision, roots);
      if (taken !== null) log.push(`checkpoint ${taken.record.tool}`);
    },
  };
}

const input = (tool: string, risk: 'read' | 'write-local', key: string) => ({
  runId: 'r1',
  call: { id: key, tool, args: { path: 'x', content: 'y' } },
  decision: { ...allowDecision, risk, targets: [] },
  idempotencyKey: `call:r1:${key}`,
});

describe('the checkpoint before a call', () => {
  it('is taken before a write runs, and not for a read', async () => {
    const root = join(base, 'ok');
    mkdirSync(root);
    writeFileSync(join(root, 'a.txt'), 'a');
    const log: string[] = [];
    const d = deps(root, join(base, 'ok-state'), log);
    expect(await executeOnce(input('read_file', 'read', 'c1'), d)).toMatchObject({ kind: 'tool.result' });
    expect(await executeOnce(input('write_file', 'write-local', 'c2'), d)).toMatchObject({
      kind: 'tool.result',
    });
    expect(log).toEqual(['read_file ran', 'checkpoint write_file', 'write_file ran']);
    expect(readdirSync(join(base, 'ok-state/checkpoints/records'))).toHaveLength(1);
  });

  it('that cannot be taken fails the call, which does not run', async () => {
    const log: string[] = [];
    const d = deps(join(base, 'no-such-root'), join(base, 'bad-state'), log);
    const observed = await executeOnce(input('write_file', 'write-local', 'c3'), d);
    expect(observed).toMatchObject({ kind: 'tool.failed' });
    expect(JSON.stringify(observed)).toContain('checkpoint_failed');
    expect(JSON.stringify(observed)).toContain('write_file did not run');
    expect(log).toEqual([]);
    expect(d.store.ledger.lookup('call:r1:c3')?.status).toBe('failed');
  });
});
