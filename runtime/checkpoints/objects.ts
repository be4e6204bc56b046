/**
 * The content-addressed store of checkpoints in the state dir: file contents and tree objects
 * under `objects/<2 hex>/<62 hex>` (named by their SHA-256), checkpoint records under
 * `records/<id>.json`. Writes go to a temporary file and are renamed into place, so a reader never
 * sees half an object; an object read back is checked against its name. The folder is 0700 and
 * lies in the state dir, which the sandbox hides from every command.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CheckpointFormatError,
  CheckpointRecord,
  checkCheckpointId,
  isCheckpointId,
  isObjectHash,
  parseStored,
  Tree,
} from './format.ts';
import { RecordIndex } from './record-index.ts';

/** The folder of the checkpoint store inside a state dir. */
export const CHECKPOINTS_DIR = 'checkpoints';

const MAX_CACHED_TREES = 20_000;

/** SHA-256 of `data` in lowercase hex. */
export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The hash a tree object has, and its stored text (its entries must already be sorted by name). */
export function treeHash(tree: Tree): { hash: string; text: string } {
  const text = JSON.stringify(tree);
  return { hash: sha256(text), text };
}

/** Raised when a checkpoint id names no record in the store. */
export class CheckpointNotFoundError extends Error {
  readonly code = 'checkpoint_not_found';
}

/** Which records to read: a run's, a session's (both: the run's of that session), or all. */
export interface RecordFilter {
  readonly runId?: string;
  readonly sessionId?: string;
}

/** The object and record files of one state dir's checkpoints. */
export class ObjectStore {
  readonly dir: string;
  readonly #index: RecordIndex;
  readonly #known = new Set<string>();
  readonly #trees = new Map<string, Tree>();
  readonly #dirs = new Set<string>();

  constructor(stateDir: string) {
    this.dir = join(stateDir, CHECKPOINTS_DIR);
    this.#index = new RecordIndex(this.dir);
  }

  #ensure(dir: string): void {
    if (this.#dirs.has(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#dirs.add(dir);
  }

  #objectPath(hash: string): string {
    if (!isObjectHash(hash))
      throw new CheckpointFormatError(
        'corrupt_checkpoint',
        `object name ${JSON.stringify(hash.slice(0, 80))} is not a hash`,
      );
    return join(this.dir, 'objects', hash.slice(0, 2), hash.slice(2));
  }

  #writeAtomic(path: string, dir: string, data: Buffer | string): void {
    this.#ensure(dir);
    const tmp = join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
    writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, path);
  }

  /** Whether an object is stored. */
  has(hash: string): boolean {
    if (this.#known.has(hash)) return true;
    const present = existsSync(this.#objectPath(hash));
    if (present) this.#known.add(hash);
    return present;
  }

  /** Stores `data` under `hash` (its SHA-256, computed by the caller) unless it is there already. */
  putBlob(hash: string, data: Buffer): void {
    if (this.has(hash)) return;
    const path = this.#objectPath(hash);
    this.#writeAtomic(path, join(this.dir, 'objects', hash.slice(0, 2)), data);
    this.#known.add(hash);
  }

  /** Stores a tree object; returns its hash. */
  putTree(tree: Tree, computed?: { hash: string; text: string }): string {
    const { hash, text } = computed ?? treeHash(tree);
    if (!this.has(hash)) {
      this.#writeAtomic(this.#objectPath(hash), join(this.dir, 'objects', hash.slice(0, 2)), text);
      this.#known.add(hash);
    }
    this.#cacheTree(hash, tree);
    return hash;
  }

  #cacheTree(hash: string, tree: Tree): void {
    if (this.#trees.size >= MAX_CACHED_TREES) this.#trees.clear();
    this.#trees.set(hash, tree);
  }

  /** The contents stored under `hash`, checked against it. */
  readBlob(hash: string): Buffer {
    const data = this.#read(hash);
    if (sha256(data) !== hash)
      throw new CheckpointFormatError('corrupt_checkpoint', `object ${hash} does not match its hash`);
    return data;
  }

  /** The tree object stored under `hash`, checked against it and parsed. */
  readTree(hash: string): Tree {
    const cached = this.#trees.get(hash);
    if (cached !== undefined) return cached;
    const text = this.#read(hash).toString('utf8');
    if (sha256(text) !== hash)
      throw new CheckpointFormatError('corrupt_checkpoint', `tree object ${hash} does not match its hash`);
    const tree = parseStored(Tree, text, `tree object ${hash}`);
    this.#cacheTree(hash, tree);
    return tree;
  }

  #read(hash: string): Buffer {
    try {
      return readFileSync(this.#objectPath(hash));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new CheckpointFormatError('corrupt_checkpoint', `object ${hash} is missing from ${this.dir}`);
      throw err;
    }
  }

  /** Writes a checkpoint record, after its entries in the index by run and session. */
  writeRecord(record: CheckpointRecord): void {
    const dir = join(this.dir, 'records');
    checkCheckpointId(record.id, 'checkpoint record');
    // A store whose first record this is has nothing to backfill: its index is complete.
    if (!this.#dirs.has(dir) && !existsSync(dir)) this.#index.markComplete();
    this.#index.add(record.id, record);
    this.#writeAtomic(
      join(dir, `${checkCheckpointId(record.id, 'checkpoint record')}.json`),
      dir,
      JSON.stringify(record),
    );
  }

  /** The record of checkpoint `id` (validated first: an id is never a path). */
  readRecord(id: string, from = 'checkpoint'): CheckpointRecord {
    checkCheckpointId(id, from);
    let text: string;
    try {
      text = readFileSync(join(this.dir, 'records', `${id}.json`), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new CheckpointNotFoundError(`${from}: no checkpoint ${id} in ${this.dir}`);
      throw err;
    }
    const record = parseStored(CheckpointRecord, text, `checkpoint record ${id}`);
    if (record.id !== id)
      throw new CheckpointFormatError('corrupt_checkpoint', `checkpoint record ${id} holds id ${record.id}`);
    return record;
  }

  /** The ids of every stored checkpoint, oldest first. */
  recordIds(): string[] {
    let names: string[];
    try {
      names = readdirSync(join(this.dir, 'records'));
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter(isCheckpointId)
      .sort();
  }

  /**
   * The records matching `filter`, oldest first. With a run or a session it opens only the
   * records the index lists under it (after a one-time backfill of a store written before the
   * index), and keeps those that name it; without, every record.
   */
  records(filter: RecordFilter): CheckpointRecord[] {
    const by: ['run' | 'session', string] | null =
      filter.runId !== undefined
        ? ['run', filter.runId]
        : filter.sessionId !== undefined
          ? ['session', filter.sessionId]
          : null;
    if (by === null) return this.recordIds().map((id) => this.readRecord(id));
    if (!this.#index.complete()) this.#backfill();
    const found: CheckpointRecord[] = [];
    for (const id of this.#index.ids(...by)) {
      let record: CheckpointRecord;
      try {
        record = this.readRecord(id);
      } catch (err) {
        // An entry whose record was removed (or not yet written) names no checkpoint.
        if (err instanceof CheckpointNotFoundError) continue;
        throw err;
      }
      if (filter.runId !== undefined && record.runId !== filter.runId) continue;
      if (filter.sessionId !== undefined && record.sessionId !== filter.sessionId) continue;
      found.push(record);
    }
    return found;
  }

  /** Writes the index entries of every record (a store written before the index), once. */
  #backfill(): void {
    for (const id of this.recordIds()) {
      try {
        this.#index.add(id, this.readRecord(id));
      } catch (err) {
        // A damaged record is left out of the index; an unfiltered listing still reports it.
        if (err instanceof CheckpointFormatError || err instanceof CheckpointNotFoundError) continue;
        throw err;
      }
    }
    this.#index.markComplete();
  }

  /** Removes a checkpoint record, then its index entries (its objects stay until `sweep`). */
  removeRecord(id: string): void {
    let indexed: CheckpointRecord | null = null;
    try {
      indexed = this.readRecord(id, 'checkpoint');
    } catch {
      indexed = null;
    }
    rmSync(join(this.dir, 'records', `${checkCheckpointId(id, 'checkpoint')}.json`), { force: true });
    if (indexed !== null) this.#index.remove(id, indexed);
  }

  /** Removes every object not in `keep` and not `spared`; returns how many were removed. */
  sweep(keep: ReadonlySet<string>, spared: (hash: string) => boolean = () => false): number {
    let removed = 0;
    const objects = join(this.dir, 'objects');
    let prefixes: string[];
    try {
      prefixes = readdirSync(objects);
    } catch {
      return 0;
    }
    for (const prefix of prefixes) {
      for (const rest of readdirSync(join(objects, prefix))) {
        const hash = `${prefix}${rest}`;
        if (keep.has(hash) || !isObjectHash(hash) || spared(hash)) continue;
        rmSync(join(objects, prefix, rest), { force: true });
        this.#known.delete(hash);
        this.#trees.delete(hash);
        removed++;
      }
    }
    return removed;
  }
}
