import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactionCut } from '../../runtime/sessions/compact-plan.ts';
import { summaryEntry, SUMMARY_HEADING, toHistory } from '../../runtime/sessions/history.ts';
import type { SessionEntry } from '../../store/index.ts';
import { runs } from '../support/laws.ts';

const ROLES = ['assistant', 'observation'] as const;

/** Stored entries from `from` on: each exchange a user entry and 0–3 entries that followed it. */
const exchanges = fc
  .tuple(
    fc.nat({ max: 40 }),
    fc.array(fc.array(fc.constantFrom(...ROLES), { maxLength: 3 }), { maxLength: 8 }),
    fc.boolean(),
  )
  .map(([from, shape, orphanFirst]): { from: number; stored: SessionEntry[] } => {
    // An entry before the first user one: the rest of an exchange a previous cut kept whole.
    const roles = [...(orphanFirst ? ['assistant'] : []), ...shape.flatMap((rest) => ['user', ...rest])];
    return {
      from,
      stored: roles.map((role, i) => ({ seq: from + i, runId: `r${i}`, entry: { role } })),
    };
  });

const isUser = (e: SessionEntry | undefined) => (e?.entry as { role?: string } | undefined)?.role === 'user';

describe('where a compaction ends (compactionCut)', () => {
  it('law: keep 0 takes everything; keep k leaves exactly the last k exchanges, cut at a user entry; fewer exchanges than k change nothing', () => {
    fc.assert(
      fc.property(exchanges, fc.nat({ max: 5 }), ({ from, stored }, keep) => {
        const through = compactionCut(stored, keep, from);
        const users = stored.filter(isUser).length;
        expect(through).toBeGreaterThanOrEqual(from);
        if (stored.length === 0) expect(through).toBe(from);
        else if (keep === 0) expect(through).toBe(from + stored.length);
        else if (users < keep) expect(through).toBe(from);
        else {
          // The kept part begins at a user entry and holds exactly `keep` exchanges.
          const rest = stored.filter((e) => e.seq >= through);
          expect(isUser(rest[0])).toBe(true);
          expect(rest.filter(isUser)).toHaveLength(keep);
        }
      }),
      { numRuns: runs(300) },
    );
  });

  it('cases: a call and its result are never split; an orphan head goes with the summarized part', () => {
    const at = (from: number, roles: string[]): SessionEntry[] =>
      roles.map((role, i) => ({ seq: from + i, runId: 'r', entry: { role } }));
    expect(
      compactionCut(at(0, ['user', 'assistant', 'observation', 'assistant', 'user', 'assistant']), 1, 0),
    ).toBe(4);
    expect(compactionCut(at(4, ['assistant', 'user', 'assistant']), 1, 4)).toBe(5);
    expect(compactionCut(at(4, ['user', 'assistant']), 1, 4)).toBe(4);
    expect(compactionCut([], 0, 7)).toBe(7);
  });

  it('the summary entry is a user turn that starts with the heading, before the history that follows it', () => {
    const s = summaryEntry({ summary: 'what happened' });
    expect(s).toEqual({ role: 'user', text: `${SUMMARY_HEADING}\nwhat happened` });
    // The history after a cut starts at a user entry, so its call ids pair up from the first.
    const after = toHistory('s', [
      { seq: 4, runId: 'b', entry: { role: 'user', text: 'q' } },
      {
        seq: 5,
        runId: 'b',
        entry: { role: 'assistant', calls: [{ id: 'c0', tool: 'read_file', args: {} }] },
      },
      {
        seq: 6,
        runId: 'b',
        entry: { role: 'observation', observation: { kind: 'tool.result', callId: 'c0', tool: 'read_file' } },
      },
    ]);
    expect(after[1]).toMatchObject({ calls: [{ id: 'h00000000' }] });
    expect(after[2]).toMatchObject({ observation: { callId: 'h00000000' } });
  });
});
