/**
 * A journal of reply parts for the paging tests: 250 failed, 40 unknown, 30 still sending and
 * 100 sent, several sharing a timestamp so a cursor must cut between equal times.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { openStore, Redactor, type Store } from '../../store/index.ts';

/** How many of the seeded parts are undelivered (failed, unknown, sending). */
export const SEEDED_UNDELIVERED = 320;

/** Opens the store in `stateDir` and writes the seeded parts; the caller closes it. */
export function seedUndelivered(stateDir: string): Store {
  const clock = { now: 1_800_000_000_000 };
  const store = openStore({
    path: join(stateDir, 'snotra.db'),
    redactor: new Redactor(),
    clock: () => clock.now,
  });
  const out = store.platforms.outbound;
  const add = (n: number, end: (key: string) => void, prefix: string): void => {
    for (let i = 0; i < n; i++) {
      // Several parts share a timestamp: the cursor must still cut between them.
      if (i % 3 === 0) clock.now += 1;
      const key = `telegram:5:${prefix}${i}`;
      expect(out.begin({ key, part: 0, parts: 1, platformId: 'tg', chatId: 5 })).toBeNull();
      end(key);
    }
  };
  add(250, (k) => out.finish(k, 0, { status: 'failed', error: '429 Too Many Requests' }), 'f');
  add(40, (k) => out.finish(k, 0, { status: 'unknown', error: 'cut' }), 'u');
  add(30, () => {}, 's');
  add(100, (k) => out.finish(k, 0, { status: 'sent', remoteId: 1 }), 'ok');
  return store;
}
