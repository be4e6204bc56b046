import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approvalInput, openTemp } from './helpers.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const WORKER = join(import.meta.dirname, 'decide-worker.ts');

function runWorker(
  args: string[],
): Promise<{ user: string; wins: string[]; reasons: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childNodeArgs(WORKER), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`decide-worker exited ${code}: ${err}`));
      else resolve(JSON.parse(out) as { user: string; wins: string[]; reasons: Record<string, string> });
    });
  });
}

describe('approval decisions across processes', () => {
  it('has exactly one winner per approval when four processes decide at the same moment', async () => {
    const { store, path } = openTemp({ clock: Date.now });
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      store.approvals.create(approvalInput(i, Date.now(), 600_000));
      ids.push(`appr-${i}`);
    }
    const startAt = String(Date.now() + 1500);
    const users = ['alice', 'bob', 'carol', 'dave'];
    const results = await Promise.all(
      users.map((user, n) => runWorker([path, user, startAt, ...(n % 2 === 0 ? ids : [...ids].reverse())])),
    );
    for (const id of ids) {
      const winners = results.filter((r) => r.wins.includes(id));
      expect(winners, id).toHaveLength(1);
      const losers = results.filter((r) => !r.wins.includes(id));
      expect(losers.map((r) => r.reasons[id])).toEqual([
        'already_decided',
        'already_decided',
        'already_decided',
      ]);
      const stored = store.approvals.get(id);
      expect(stored?.decidedBy).toBe(winners[0]?.user);
    }
    const resolved = store.audit.list().filter((e) => e.kind === 'approval_resolved');
    expect(resolved).toHaveLength(ids.length);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: ids.length * 2 });
  }, 60_000);
});
