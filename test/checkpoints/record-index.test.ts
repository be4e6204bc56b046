/**
 * `snotra rewind --list --run R` / `--session S` read only that run's or session's checkpoint
 * records (issue 38), through the index by run and session: another run's record is never
 * opened (a damaged one does not fail the listing), and the output is the one a listing of
 * every record filtered by run or session gives. A law (fast-check): for any records over any
 * runs and sessions, written, removed by retention, or left without entries by a store written
 * before the index, the indexed answer is the filtered whole. Look-alikes: an entry whose record
 * is gone, and an entry filed under another run, are not listed.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Checkpointer, listCheckpoints } from '../../runtime/checkpoints/index.ts';
import { newCheckpointId, type CheckpointRecord } from '../../runtime/checkpoints/format.ts';
import { ObjectStore } from '../../runtime/checkpoints/objects.ts';
import { INDEX_COMPLETE_FILE } from '../../runtime/checkpoints/record-index.ts';
import { runs } from '../support/laws.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-ck-index-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
let clock = 1_700_000_000_000;
const now = () => clock++;

function dirs(): { root: string; state: string } {
  const dir = join(base, String(n++));
  const root = join(dir, 'root');
  const state = join(dir, 'state');
  mkdirSync(root, { recursive: true });
  mkdirSync(state);
  return { root, state };
}

const recordFile = (state: string, id: string) => join(state, 'checkpoints', 'records', `${id}.json`);

describe('listing one run’s or one session’s checkpoints', () => {
  it('opens only its records: another run’s damaged record does not fail it, and the output is unchanged', () => {
    const { root, state } = dirs();
    const checkpoints = new Checkpointer(state, now);
    const roots = [{ id: 'root', path: root }];
    const take = (runId: string, sessionId: string | null, i: number) => {
      writeFileSync(join(root, 'f.txt'), `version ${i}\n`);
      return checkpoints.take({ runId, callId: `c${i}`, sessionId, tool: 'shell' }, roots).record.id;
    };
    const a1 = take('agent:run-a', 'chat-1', 1);
    const b1 = take('agent:run-b', 'chat-2', 2);
    const a2 = take('agent:run-a', 'chat-1', 3);
    const c1 = take('agent:run-c', 'chat-1', 4);
    writeFileSync(join(root, 'f.txt'), 'now\n');
    const byRun = listCheckpoints(state, { runId: 'agent:run-a' }, now);
    const bySession = listCheckpoints(state, { sessionId: 'chat-1' }, now);
    const both = listCheckpoints(state, { runId: 'agent:run-c', sessionId: 'chat-1' }, now);
    // The output a listing of every record, filtered, gives (what --list --run printed before).
    const all = listCheckpoints(state, {}, now);
    expect(byRun).toEqual(all.filter((c) => c.runId === 'agent:run-a'));
    expect(byRun.map((c) => c.id)).toEqual([a1, a2]);
    expect(byRun[0]?.changedSince).toEqual([{ root: 'root', path: 'f.txt', change: 'modified' }]);
    expect(bySession).toEqual(all.filter((c) => c.sessionId === 'chat-1'));
    expect(bySession.map((c) => c.id)).toEqual([a1, a2, c1]);
    expect(both.map((c) => c.id)).toEqual([c1]);
    // Run B's record is damaged: the whole listing reads it and fails; A's and the session's do not.
    writeFileSync(recordFile(state, b1), '{"v":1,');
    expect(() => listCheckpoints(state, {}, now)).toThrow(
      expect.objectContaining({ code: 'corrupt_checkpoint' }),
    );
    expect(listCheckpoints(state, { runId: 'agent:run-a' }, now)).toEqual(byRun);
    expect(listCheckpoints(state, { sessionId: 'chat-1' }, now)).toEqual(bySession);
    expect(listCheckpoints(state, { runId: 'agent:run-zzz' }, now)).toEqual([]);
  });

  it('a store written before the index is indexed once, then lists the same; a damaged record is left out of it', () => {
    const { root, state } = dirs();
    const checkpoints = new Checkpointer(state, now);
    const meta = (runId: string) => ({ runId, callId: 'c', sessionId: null, tool: 'write_file' });
    const a = checkpoints.take(meta('agent:run-a'), [{ id: 'root', path: root }]).record.id;
    const b = checkpoints.take(meta('agent:run-b'), [{ id: 'root', path: root }]).record.id;
    const store = join(state, 'checkpoints');
    for (const f of ['by-run', 'by-session', INDEX_COMPLETE_FILE])
      rmSync(join(store, f), { recursive: true, force: true });
    const damaged = newCheckpointId(now());
    writeFileSync(recordFile(state, damaged), 'not json');
    expect(listCheckpoints(state, { runId: 'agent:run-a' }, now).map((c) => c.id)).toEqual([a]);
    expect(readFileSync(join(store, INDEX_COMPLETE_FILE), 'utf8')).toBe('');
    expect(listCheckpoints(state, { runId: 'agent:run-b' }, now).map((c) => c.id)).toEqual([b]);
  });

  it('an entry whose record is gone, or filed under another run, lists nothing', () => {
    const { root, state } = dirs();
    const checkpoints = new Checkpointer(state, now);
    const a = checkpoints.take({ runId: 'agent:run-a', callId: 'c', sessionId: null, tool: 'shell' }, [
      { id: 'root', path: root },
    ]).record.id;
    const b = checkpoints.take({ runId: 'agent:run-b', callId: 'c', sessionId: null, tool: 'shell' }, [
      { id: 'root', path: root },
    ]).record.id;
    const byRun = join(state, 'checkpoints', 'by-run');
    // B's folder gets A's id too (a tampered or colliding entry): A's record names run A.
    for (const key of readdirSync(byRun)) writeFileSync(join(byRun, key, a), '');
    rmSync(recordFile(state, b));
    expect(listCheckpoints(state, { runId: 'agent:run-b' }, now)).toEqual([]);
    expect(listCheckpoints(state, { runId: 'agent:run-a' }, now).map((c) => c.id)).toEqual([a]);
  });
});

describe('the index by run and session (a law)', () => {
  const RUNS = ['agent:run-1', 'agent:run-2', 'agent:run-3', null] as const;
  const SESSIONS = ['s1', 's2', null] as const;
  const spec = fc.record({
    run: fc.constantFrom(...RUNS),
    session: fc.constantFrom(...SESSIONS),
    removed: fc.boolean(),
  });

  it('answers as every record filtered does, after writes, removals and a store without entries', () => {
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 12 }), fc.boolean(), (specs, legacy) => {
        const { state } = dirs();
        const store = new ObjectStore(state);
        const ids: string[] = [];
        for (const s of specs) {
          const record: CheckpointRecord = {
            v: 1,
            id: newCheckpointId(now()),
            at: clock,
            runId: s.run,
            callId: null,
            sessionId: s.session,
            tool: 'shell',
            roots: [],
          };
          store.writeRecord(record);
          ids.push(record.id);
        }
        specs.forEach((s, i) => s.removed && store.removeRecord(ids[i] as string));
        if (legacy)
          for (const f of ['by-run', 'by-session', INDEX_COMPLETE_FILE])
            rmSync(join(store.dir, f), { recursive: true, force: true });
        const reader = new ObjectStore(state);
        const all = reader.records({});
        const filters: { runId?: string; sessionId?: string }[] = [
          ...RUNS.flatMap((r) => (r === null ? [] : [{ runId: r }])),
          ...SESSIONS.flatMap((s) => (s === null ? [] : [{ sessionId: s }])),
          { runId: 'agent:run-1', sessionId: 's2' },
          { runId: 'agent:none' },
        ];
        for (const f of filters) {
          const expected = all.filter(
            (r) =>
              (f.runId === undefined || r.runId === f.runId) &&
              (f.sessionId === undefined || r.sessionId === f.sessionId),
          );
          expect(reader.records(f)).toEqual(expected);
        }
      }),
      { numRuns: runs(25) },
    );
  });
});
