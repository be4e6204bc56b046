import { readFileSync } from 'node:fs';
import { constants, inflateRawSync } from 'node:zlib';
import { AUDIT_CODEC } from '../../store/audit/encoding.ts';
import type { TextCodec } from '../../store/codec.ts';
import { SNAPSHOT_CODEC } from '../../store/snapshots/encoding.ts';

/** Every codec whose blobs the store writes (store/codec.ts). */
const CODECS: readonly TextCodec[] = [SNAPSHOT_CODEC, AUDIT_CODEC];

/**
 * The bytes of SQLite files (database, WAL) as a secret scan must see them: the raw bytes, then
 * the text of every compressed blob anywhere in them — current rows, old row versions still in
 * WAL frames, freed pages — found by trying to inflate after every byte that is a codec's tag
 * (a compressed blob is short and sits whole inside one cell). Without the decoded part a scan
 * of compressed rows would pass whatever they held.
 */
export function storedBytes(...files: readonly string[]): Buffer {
  return withDecodedBlobs(Buffer.concat(files.map((file) => readFileSync(file))));
}

/** `raw`, then the decoded text of every blob a codec finds in it (see `storedBytes`). */
export function withDecodedBlobs(raw: Buffer): Buffer {
  const parts: Buffer[] = [raw];
  for (let i = 0; i + 2 < raw.length; i++) {
    const codec = CODECS.find((c) => c.tag === raw[i]);
    // A DEFLATE stream's first block has type 01 (fixed) or 10 (dynamic) in bits 1–2.
    const type = ((raw[i + 1] as number) >> 1) & 3;
    if (codec === undefined || type === 0 || type === 3) continue;
    try {
      const text = inflateRawSync(raw.subarray(i + 1, i + 1 + 65536), {
        dictionary: codec.dictionary,
        finishFlush: constants.Z_SYNC_FLUSH,
        chunkSize: 1024,
        maxOutputLength: codec.maxBytes,
      });
      parts.push(Buffer.of(0x0a), text);
    } catch {
      // Not the start of a stream.
    }
  }
  return Buffer.concat(parts);
}
