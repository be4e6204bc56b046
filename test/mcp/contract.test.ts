/**
 * The contract matrix (security model §13) where it applies to MCP tools, through the real
 * runtime and a real (hostile) server: `deny` runs nothing; `allow` cannot escape the roots with
 * a declared path argument, and the server gets the canonical path; a read-only root rejects a
 * write through a real server without asking; an unattended call parks,
 * survives a restart and runs exactly once once approved; a standing approval covers only its
 * exact target.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../store/index.ts';
import {
  BIN,
  eventually,
  hostileLog,
  hostileServer,
  mcpFixture,
  ready,
  runOnce,
  script,
  type McpFixture,
} from './support.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const SECRET = 'contract-secret-Pw9-mcp';
let fx: McpFixture | null = null;
afterEach(() => fx?.cleanup());

function setup(mode: 'ask' | 'allow' | 'deny', tools: Record<string, unknown> = {}): McpFixture {
  fx = mcpFixture(
    (project) => ({ agents: { a: { mode } }, mcp: { servers: { h: hostileServer(project) } }, tools }),
    SECRET,
  );
  return fx;
}

const calls = (f: McpFixture, tool: string) =>
  hostileLog(f.project).filter((l) => l.startsWith(`call ${tool} `));

describe('MCP tools and the contract matrix', () => {
  it('deny mode executes no MCP tool', async () => {
    const f = setup('deny');
    const rt = await f.start({ a: script([{ tool: 'mcp:h:lookup', args: { q: 'x' } }]) });
    try {
      await ready(rt, 'h');
      const { seen, approvals } = await runOnce(rt, 'a');
      expect(approvals).toEqual([]);
      expect(seen[0]).toMatchObject({ kind: 'tool.denied', reason: 'mode_deny' });
      expect(calls(f, 'lookup')).toEqual([]);
    } finally {
      await rt.stop();
    }
  }, 120_000);

  it('allow mode cannot escape the roots through a declared path argument; the server gets the canonical path', async () => {
    const f = setup('allow', { 'mcp:h:target': { risk: 'write-local', pathArguments: ['note'] } });
    // A link inside the root to a folder outside it: canonicalized, it is outside.
    mkdirSync(join(f.dir, 'elsewhere'));
    symlinkSync(join(f.dir, 'elsewhere'), join(f.project, 'link'));
    const rt = await f.start({
      a: script([
        { tool: 'mcp:h:target', args: { note: '../outside.txt' } },
        { tool: 'mcp:h:target', args: { note: '/etc/shadow' } },
        { tool: 'mcp:h:target', args: { note: 'sub/../ok.txt' } },
        { tool: 'mcp:h:target', args: { note: 'link/x.txt' } },
      ]),
    });
    try {
      await ready(rt, 'h');
      const { seen, approvals } = await runOnce(rt, 'a');
      expect(seen[0]).toMatchObject({ kind: 'tool.denied', reason: 'outside_roots' });
      expect(seen[1]).toMatchObject({ kind: 'tool.denied', reason: 'sensitive_path' });
      // No destructiveHint from the server: even a vetted write-local tool asks (the worst case).
      expect(approvals.map((a) => a.reason)).toEqual(['tool_default_ask']);
      expect(seen[2]).toMatchObject({ kind: 'tool.result' });
      expect(seen[3]).toMatchObject({ kind: 'tool.denied', reason: 'outside_roots' });
      expect(calls(f, 'target')).toEqual([
        `call target ${JSON.stringify({ note: join(f.project, 'ok.txt') })}`,
      ]);
    } finally {
      await rt.stop();
    }
  }, 120_000);

  it('a read-only root rejects an MCP write without offering an override (server-filesystem, allow mode)', async () => {
    fx = mcpFixture((project) => {
      const docs = join(project, '..', 'docs');
      mkdirSync(docs, { recursive: true });
      writeFileSync(join(docs, 'guide.md'), 'a guide\n');
      return {
        workspace: {
          roots: [
            { id: 'project', path: 'project', access: 'read-write', primary: true },
            { id: 'docs', path: 'docs', access: 'read' },
          ],
        },
        agents: { a: { mode: 'allow' } },
        // The server itself may write both folders; our read-only root decides.
        mcp: {
          servers: {
            fs: { command: join(BIN, 'mcp-server-filesystem'), args: [project, docs], network: false },
          },
        },
        tools: {
          'mcp:fs:read_text_file': { risk: 'read', pathArguments: ['path'] },
          'mcp:fs:write_file': { risk: 'write-local', pathArguments: ['path'] },
        },
      };
    }, SECRET);
    const docs = join(fx.dir, 'docs');
    const rt = await fx.start({
      a: script([
        { tool: 'mcp:fs:write_file', args: { path: join(docs, 'c5.txt'), content: 'x' } },
        { tool: 'mcp:fs:write_file', args: { path: join(docs, 'guide.md'), content: 'changed' } },
        { tool: 'mcp:fs:read_text_file', args: { path: join(docs, 'guide.md') } },
      ]),
    });
    try {
      await ready(rt, 'fs');
      const { seen, approvals } = await runOnce(rt, 'a');
      expect(approvals).toEqual([]);
      expect(seen[0]).toMatchObject({ kind: 'tool.denied', reason: 'read_only_root' });
      expect(seen[1]).toMatchObject({ kind: 'tool.denied', reason: 'read_only_root' });
      // The benign look-alike: a read in that root runs.
      expect(seen[2]).toMatchObject({ kind: 'tool.result' });
      expect(JSON.stringify(seen[2])).toContain('a guide');
      expect(existsSync(join(docs, 'c5.txt'))).toBe(false);
      expect(readFileSync(join(docs, 'guide.md'), 'utf8')).toBe('a guide\n');
    } finally {
      await rt.stop();
    }
  }, 120_000);

  it('an unattended call parks, survives a restart, and runs exactly once when approved', async () => {
    const f = setup('ask');
    const steps = { a: script([{ tool: 'mcp:h:lookup', args: { q: 'parked' } }]) };
    const rt = await f.start(steps);
    let approval: ApprovalRecord | undefined;
    let runId: string;
    try {
      await ready(rt, 'h');
      rt.onApproval((a) => (approval = a));
      runId = await rt.runs.runTask('a', 'task-1', 'go');
      await eventually(
        () => runtimeInternals(rt).store.snapshots.get(runId)?.status === 'waiting_for_approval',
        60_000,
        'parked',
      );
    } finally {
      await rt.stop();
    }
    expect(approval?.tool).toBe('mcp:h:lookup');
    const rt2 = await f.start(steps);
    try {
      await ready(rt2, 'h');
      expect(rt2.decide(approval?.id ?? '', 'approved', 'tester')).toMatchObject({ ok: true });
      const outcome = await rt2.waitForRun(runId);
      expect(outcome.status).toBe('completed');
      expect(calls(f, 'lookup')).toHaveLength(1);
    } finally {
      await rt2.stop();
    }
  }, 180_000);

  it('a standing approval of an MCP tool covers only its exact target', async () => {
    const f = setup('ask', { 'mcp:h:lookup': { targetArgument: 'q' } });
    const rt = await f.start({
      a: script([
        { tool: 'mcp:h:lookup', args: { q: 'alpha' } },
        { tool: 'mcp:h:lookup', args: { q: 'alpha' } },
        { tool: 'mcp:h:lookup', args: { q: 'beta' } },
      ]),
    });
    try {
      await ready(rt, 'h');
      const asked: ApprovalRecord[] = [];
      const off = rt.onApproval((a) => {
        asked.push(a);
        if (asked.length === 1) rt.approvals.approveWithGrant(a.id, 'standing', 'tester');
        else rt.decide(a.id, 'denied', 'tester');
      });
      const runId = await rt.runs.runTask('a', 'task-standing', 'go');
      await rt.waitForRun(runId);
      off();
      // alpha asked once (then granted), alpha again ran on the grant, beta asked.
      expect(asked.map((a) => a.target)).toEqual(['alpha', 'beta']);
      expect(calls(f, 'lookup')).toHaveLength(2);
    } finally {
      await rt.stop();
    }
  }, 180_000);
});
