import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, inflateRawSync } from 'node:zlib';
import { FRAGMENTS } from '../../store/audit/encoding.ts';
import { SNAPSHOT_CODEC } from '../../store/snapshots/encoding.ts';

/**
 * The bytes of SQLite files (database, WAL) as a secret scan must see them: the raw bytes; the
 * same bytes with every audit fragment code expanded (store/audit/encoding.ts: a secret that
 * contained a fragment would otherwise be split by a code); then the text of every compressed
 * snapshot anywhere in them — current rows, old row versions still in WAL frames, freed pages —
 * found by trying to inflate after every byte that is the codec's tag (a compressed payload sits
 * whole inside one cell). Without the decoded parts a scan would pass whatever the rows held.
 */
export function storedBytes(...files: readonly string[]): Buffer {
  return withDecodedRows(Buffer.concat(files.map((file) => readFileSync(file))));
}

/** The store's files (the database, its WAL and shared memory) in a state dir, by path. */
export function databaseFiles(stateDir: string): string[] {
  return readdirSync(stateDir)
    .filter((n) => n.startsWith('snotra.db'))
    .map((n) => join(stateDir, n));
}

/** `raw`, then its decoded forms (see `storedBytes`). */
export function withDecodedRows(raw: Buffer): Buffer {
  const parts: Buffer[] = [raw, Buffer.of(0x0a)];
  let from = 0;
  for (let i = 0; i < raw.length; i++) {
    const fragment = FRAGMENTS[(raw[i] as number) - 1];
    if (fragment === undefined) continue;
    parts.push(raw.subarray(from, i), Buffer.from(fragment, 'utf8'));
    from = i + 1;
  }
  parts.push(raw.subarray(from));
  for (let i = 0; i + 2 < raw.length; i++) {
    // A DEFLATE stream's first block has type 01 (fixed) or 10 (dynamic) in bits 1–2.
    const type = ((raw[i + 1] as number) >> 1) & 3;
    if (raw[i] !== SNAPSHOT_CODEC.tag || type === 0 || type === 3) continue;
    try {
      const text = inflateRawSync(raw.subarray(i + 1, i + 1 + 65536), {
        dictionary: SNAPSHOT_CODEC.dictionary,
        finishFlush: constants.Z_SYNC_FLUSH,
        chunkSize: 1024,
        maxOutputLength: SNAPSHOT_CODEC.maxBytes,
      });
      parts.push(Buffer.of(0x0a), text);
    } catch {
      // Not the start of a stream.
    }
  }
  return Buffer.concat(parts);
}
