/**
 * The one owner of the checkpoint store's formats: checkpoint ids, object hashes, tree objects
 * (one directory's entries) and checkpoint records. Everything read back from the store passes
 * through the parsers here, which refuse what a tampered store could hold: a name that is `..`,
 * holds a `/` or a NUL, a hash that is not 64 hex digits, an unknown or future version.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** The version of tree objects and checkpoint records this code writes and reads. */
export const CHECKPOINT_FORMAT_VERSION = 1;

const ID_PATTERN = /^ck-[0-9a-z]{6,12}-[0-9a-f]{8}$/;
const HASH_PATTERN = /^[0-9a-f]{64}$/;

/** Raised when a checkpoint id, object or record is malformed; `code` says which. */
export class CheckpointFormatError extends Error {
  constructor(
    readonly code: 'invalid_checkpoint_id' | 'corrupt_checkpoint',
    message: string,
  ) {
    super(message);
    this.name = 'CheckpointFormatError';
  }
}

/** A new checkpoint id (`ck-<time base 36>-<8 hex>`): sortable by time, never a path. */
export function newCheckpointId(at: number): string {
  return `ck-${Math.max(0, Math.floor(at)).toString(36).padStart(8, '0')}-${randomBytes(4).toString('hex')}`;
}

/** Whether `id` has the form of a checkpoint id (so it can name a file without being a path). */
export function isCheckpointId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** `id` when it is a checkpoint id; otherwise an error naming it and where it came from. */
export function checkCheckpointId(id: string, from: string): string {
  if (!isCheckpointId(id))
    throw new CheckpointFormatError(
      'invalid_checkpoint_id',
      `${from}: ${JSON.stringify(id.slice(0, 80))} is not a checkpoint id (ck-<time>-<8 hex digits>, as snotra rewind --list shows)`,
    );
  return id;
}

/** Whether `hash` is a SHA-256 in lowercase hex (the only form an object name takes). */
export function isObjectHash(hash: string): boolean {
  return HASH_PATTERN.test(hash);
}

/** Whether `name` is one plain path component: not empty, `.` or `..`, no `/` and no NUL. */
export function isPlainName(name: string): boolean {
  return name.length > 0 && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');
}

const Hash = z.string().regex(HASH_PATTERN, 'an object hash (64 hex digits)');
const Name = z.string().refine(isPlainName, 'a plain file name (not "", "." or "..", no "/" or NUL)');
const Mode = z.number().int().min(0).max(0o7777);

/** One entry of a directory, as a tree object records it. */
export const TreeEntry = z.discriminatedUnion('type', [
  z.strictObject({
    name: Name,
    type: z.literal('file'),
    mode: Mode,
    size: z.number().int().min(0),
    hash: Hash,
  }),
  z.strictObject({ name: Name, type: z.literal('dir'), mode: Mode, hash: Hash }),
  z.strictObject({ name: Name, type: z.literal('symlink'), target: z.string().min(1).max(4096) }),
]);
export type TreeEntry = z.infer<typeof TreeEntry>;

/** One directory's entries, sorted by name (its hash names it in the object store). */
export const Tree = z.strictObject({
  v: z.literal(CHECKPOINT_FORMAT_VERSION),
  entries: z.array(TreeEntry),
});
export type Tree = z.infer<typeof Tree>;

/**
 * Why a path is not in a checkpoint (the one documented exclusion rule): a `node_modules`
 * folder, a file over 10 MB, a path a `deny` glob of the root matches, the runtime's own state
 * dir inside the root, or something that is no file, folder or symlink (a socket, a fifo).
 */
export const ExclusionReason = z.enum(['node_modules', 'over_10mb', 'denied', 'state_dir', 'special']);
export type ExclusionReason = z.infer<typeof ExclusionReason>;

/** One root as a checkpoint holds it. */
export const CheckpointRoot = z.strictObject({
  id: z.string().min(1).max(200),
  /** Canonical absolute path of the root when the checkpoint was taken. */
  path: z.string().startsWith('/').max(4096),
  /** The root folder's own mode. */
  mode: Mode,
  deny: z.array(z.string().max(1000)).max(1000),
  /** The hash of the root folder's tree object. */
  tree: Hash,
  excluded: z.array(z.strictObject({ path: z.string().max(4096), reason: ExclusionReason })),
});
export type CheckpointRoot = z.infer<typeof CheckpointRoot>;

/** A checkpoint: when, before which call (or which rewind), and the roots it holds. */
export const CheckpointRecord = z.strictObject({
  v: z.literal(CHECKPOINT_FORMAT_VERSION),
  id: z.string().regex(ID_PATTERN),
  at: z.number().int().min(0),
  runId: z.string().max(400).nullable(),
  callId: z.string().max(400).nullable(),
  sessionId: z.string().max(400).nullable(),
  /** The tool of the call, or `rewind` for the checkpoint a rewind takes before it restores. */
  tool: z.string().min(1).max(400),
  roots: z.array(CheckpointRoot),
});
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

/**
 * The version of the prefilter file: 2 holds only files whose timestamps were older than the
 * scan that recorded them (version 1 could hold racily clean entries, so it is not read).
 */
export const PREFILTER_FORMAT_VERSION = 2;

/**
 * The prefilter kept between processes (`prefilter.json` in the store's folder): per root
 * (canonical path), per file (path inside the root), the size, mtime, ctime, inode and mode last
 * seen and the hash of the contents read then. A cache: an entry is used only when a file's stat
 * matches it exactly and its contents are in the store; a file that does not parse is ignored.
 */
export const PrefilterFile = z.strictObject({
  v: z.literal(PREFILTER_FORMAT_VERSION),
  roots: z.array(
    z.strictObject({
      path: z.string().startsWith('/').max(4096),
      files: z.array(
        z.tuple([
          z.string().min(1).max(4096),
          z.number().int().min(0),
          z.number(),
          z.number(),
          z.number(),
          Mode,
          Hash,
        ]),
      ),
    }),
  ),
});
export type PrefilterFile = z.infer<typeof PrefilterFile>;

/** Parses JSON text read from the store with `schema`; anything else is `corrupt_checkpoint` naming `what`. */
export function parseStored<T>(schema: z.ZodType<T>, text: string, what: string): T {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new CheckpointFormatError('corrupt_checkpoint', `${what} is not JSON`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : 'invalid';
    throw new CheckpointFormatError('corrupt_checkpoint', `${what} is malformed (${where})`);
  }
  return parsed.data;
}
