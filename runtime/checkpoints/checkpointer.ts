/**
 * Takes checkpoints: in the runtime before every call that can change a read-write root (see
 * `scope.ts`), and before a rewind. It runs in the runtime's own process, outside the sandbox,
 * and writes only to the state dir's checkpoint store, which the sandbox hides from commands.
 */
import { realpathSync } from 'node:fs';
import type { Decision } from '../../policy/decision.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { newCheckpointId, type CheckpointRecord, type CheckpointRoot, type Tree } from './format.ts';
import { ObjectStore } from './objects.ts';
import { loadPrefilter, savePrefilter } from './prefilter-file.ts';
import { scanRoot, StatCache } from './scan.ts';
import { realScanFs, type ScanFs } from './scan-fs.ts';
import { rootsToCheckpoint } from './scope.ts';

/** A checkpoint that could not be taken: the call it was for does not run. */
export class CheckpointError extends Error {
  readonly code = 'checkpoint_failed';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CheckpointError';
  }
}

/** Who a checkpoint is for. */
export interface CheckpointMeta {
  readonly runId: string | null;
  readonly callId: string | null;
  readonly sessionId: string | null;
  readonly tool: string;
}

/** A root to checkpoint. */
export type RootToCheckpoint = Pick<WorkspaceRoot, 'id' | 'path' | 'deny'>;

/** A checkpoint taken, with what it cost. */
export interface TakenCheckpoint {
  readonly record: CheckpointRecord;
  /** Trees of this checkpoint by hash (also in the store). */
  readonly trees: ReadonlyMap<string, Tree>;
  readonly files: number;
  readonly hashed: number;
  readonly storedBytes: number;
}

function canonical(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** Files hashed again since the prefilter file was last written that make it worth writing again. */
const SAVE_AFTER_HASHED = 256;

/** The checkpoints of one state dir. */
export class Checkpointer {
  readonly store: ObjectStore;
  readonly #cache = new StatCache();
  /** Roots whose prefilter file entries were read (once per root and process). */
  readonly #loaded = new Set<string>();
  /** Per root, files hashed since this process last wrote the prefilter file (absent: never). */
  readonly #unsaved = new Map<string, number>();
  /** Per root, the racily clean files left out of the prefilter file last written. */
  readonly #racyAtSave = new Map<string, number>();
  readonly #stateDir: string | null;
  readonly #now: () => number;
  readonly #fs: ScanFs;

  /** `options.fs`: the file system's metadata and clock (the real ones unless a test models them). */
  constructor(stateDir: string, now: () => number, options: { readonly fs?: ScanFs } = {}) {
    this.store = new ObjectStore(stateDir);
    this.#stateDir = canonical(stateDir);
    this.#now = now;
    this.#fs = options.fs ?? realScanFs;
  }

  /**
   * The checkpoint a call takes before it runs, of the read-write roots of `roots` it can change;
   * null (and no I/O) for a call that can change none. Throws `CheckpointError` when it cannot.
   */
  beforeCall(
    meta: CheckpointMeta,
    decision: Pick<Decision, 'risk' | 'targets'>,
    roots: readonly WorkspaceRoot[],
  ): TakenCheckpoint | null {
    const selected = rootsToCheckpoint(meta.tool, decision, roots);
    if (selected.length === 0) return null;
    return this.take(meta, selected);
  }

  /** Checkpoints `roots` now. */
  take(meta: CheckpointMeta, roots: readonly RootToCheckpoint[]): TakenCheckpoint {
    try {
      const at = this.#now();
      const held: CheckpointRoot[] = [];
      const trees = new Map<string, Tree>();
      let files = 0;
      let hashed = 0;
      let storedBytes = 0;
      for (const root of roots) {
        const path = canonical(root.path);
        if (path === null)
          throw new CheckpointError(
            `the checkpoint before ${meta.tool} could not be taken (root ${root.id}, ${root.path}, cannot be read); ${meta.tool} did not run`,
          );
        this.#load(path);
        const scan = scanRoot(
          {
            id: root.id,
            path,
            deny: root.deny ?? [],
            stateDir: this.#stateDir,
            scanStart: this.#fs.now(this.store.dir),
          },
          this.store,
          this.#cache,
          this.#fs,
        );
        this.#save(path, scan.hashed, scan.racy);
        held.push(scan.root);
        for (const [h, t] of scan.trees) trees.set(h, t);
        files += scan.files;
        hashed += scan.hashed;
        storedBytes += scan.storedBytes;
      }
      const record: CheckpointRecord = {
        v: 1,
        id: newCheckpointId(at),
        at,
        runId: meta.runId,
        callId: meta.callId,
        sessionId: meta.sessionId,
        tool: meta.tool,
        roots: held,
      };
      this.store.writeRecord(record);
      return { record, trees, files, hashed, storedBytes };
    } catch (err) {
      if (err instanceof CheckpointError) throw err;
      throw new CheckpointError(
        `the checkpoint before ${meta.tool} could not be taken (${(err as Error).message}); ${meta.tool} did not run`,
        { cause: err },
      );
    }
  }

  /**
   * A scan of `root` as it is now that writes nothing to the store (for a diff). It reads only
   * the files whose stat differs from what the prefilter remembers.
   */
  look(root: CheckpointRoot): { tree: string; trees: ReadonlyMap<string, Tree> } {
    this.#load(root.path);
    const scan = scanRoot(
      {
        id: root.id,
        path: root.path,
        deny: root.deny,
        stateDir: this.#stateDir,
        scanStart: this.#fs.now(this.store.dir),
      },
      null,
      this.#cache,
      this.#fs,
    );
    return { tree: scan.root.tree, trees: scan.trees };
  }

  /** Seeds the prefilter of `root` from the prefilter file, once per root. */
  #load(root: string): void {
    if (this.#loaded.has(root)) return;
    this.#loaded.add(root);
    const files = loadPrefilter(this.store.dir, root);
    if (files !== null) this.#cache.seed(root, files);
  }

  /**
   * Writes the prefilter of `root` after a scan that hashed files: at the first such scan of
   * the process, then once `SAVE_AFTER_HASHED` more files were hashed, or when the file last
   * written left racily clean files out (they were read again since). A write that fails is
   * left at that (the file is a cache: the next process reads those files again).
   */
  #save(root: string, hashed: number, racy: number): void {
    if (hashed === 0) return;
    const since = this.#unsaved.get(root);
    const total = (since ?? 0) + hashed;
    if (since !== undefined && total < SAVE_AFTER_HASHED && (this.#racyAtSave.get(root) ?? 0) === 0) {
      this.#unsaved.set(root, total);
      return;
    }
    const files = this.#cache.files(root);
    if (files === undefined) return;
    try {
      savePrefilter(this.store.dir, new Map([[root, files]]));
      this.#unsaved.set(root, 0);
      this.#racyAtSave.set(root, racy);
    } catch {
      this.#unsaved.set(root, total);
    }
  }

  /** The state dir, canonical (null when it cannot be resolved). */
  get stateDir(): string | null {
    return this.#stateDir;
  }
}
