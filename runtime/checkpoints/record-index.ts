/**
 * The index of checkpoint records by run and by session, so listing one run's (or one
 * session's) checkpoints opens only its records, never the others: one empty file per record
 * under `by-run/<sha256 of the run id>/<checkpoint id>` and `by-session/<sha256 of the session
 * id>/<checkpoint id>` in the store's folder. An entry is written before its record and removed
 * after it, so a crash leaves at most an entry without a record, which a reader skips. The index
 * is a hint: a record read through it is kept only when it names that run or session.
 *
 * A store written before the index existed has no entries: its first filtered listing reads
 * every record once to write them, then leaves `index-complete` beside them; a store whose
 * first record is written by this code is complete from the start.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { isCheckpointId } from './format.ts';

/** The file whose presence says every record of the store has its index entries. */
export const INDEX_COMPLETE_FILE = 'index-complete';

/** Which index: by run id or by session id. */
export type IndexKind = 'run' | 'session';

const FOLDER: Record<IndexKind, string> = { run: 'by-run', session: 'by-session' };

function keyOf(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The ids a record is indexed under. */
export interface IndexedIds {
  readonly runId: string | null;
  readonly sessionId: string | null;
}

/** The by-run and by-session entries of one store folder. */
export class RecordIndex {
  readonly #dir: string;

  constructor(storeDir: string) {
    this.#dir = storeDir;
  }

  #folder(kind: IndexKind, value: string): string {
    return join(this.#dir, FOLDER[kind], keyOf(value));
  }

  #each(ids: IndexedIds, f: (folder: string) => void): void {
    if (ids.runId !== null) f(this.#folder('run', ids.runId));
    if (ids.sessionId !== null) f(this.#folder('session', ids.sessionId));
  }

  /** Writes the entries of record `id` (before the record itself). */
  add(id: string, ids: IndexedIds): void {
    this.#each(ids, (folder) => {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      closeSync(openSync(join(folder, id), 'w', 0o600));
    });
  }

  /** Removes the entries of record `id` (after the record itself). */
  remove(id: string, ids: IndexedIds): void {
    this.#each(ids, (folder) => rmSync(join(folder, id), { force: true }));
  }

  /** The checkpoint ids indexed under `value`, oldest first (some may name no record any more). */
  ids(kind: IndexKind, value: string): string[] {
    let names: string[];
    try {
      names = readdirSync(this.#folder(kind, value));
    } catch {
      return [];
    }
    return names.filter(isCheckpointId).sort();
  }

  /** Whether every record has its entries. */
  complete(): boolean {
    return existsSync(join(this.#dir, INDEX_COMPLETE_FILE));
  }

  /** Records that every record has its entries (after a backfill, or in a store that had none). */
  markComplete(): void {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    closeSync(openSync(join(this.#dir, INDEX_COMPLETE_FILE), 'w', 0o600));
  }
}
