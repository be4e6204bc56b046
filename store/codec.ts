import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * The compact encoding of stored JSON text (schema version 8): one tag byte naming the
 * encoding, then the content. `deflate` tags are raw DEFLATE (RFC 1951) with a preset
 * dictionary fixed per tag forever (a new dictionary gets a new tag); `plain` is the UTF-8 text
 * itself, for text too large to be worth a compressed form or as a fallback. Encoding is
 * lossless for any string: decode(encode(text)) === text, byte for byte (the audit chain hashes
 * the decoded text). Callers redact first and encode the redacted text.
 */
export interface TextCodec {
  /** What is encoded, for messages ("run snapshot", "audit row"). */
  readonly what: string;
  /** The tag byte of the compressed form. */
  readonly tag: number;
  /** The preset dictionary of that tag. */
  readonly dictionary: Buffer;
  /** Longest text decoded (and compressed): a longer one is stored plain, a bigger output refused. */
  readonly maxBytes: number;
}

/** The tag of text stored as plain UTF-8. */
export const PLAIN_TAG = 0x00;

/** zlib settings of every deflate tag (window 32 KiB: the dictionary and the text share it). */
const DEFLATE_OPTIONS = { level: 6, windowBits: 15, memLevel: 8 } as const;

/**
 * The encoder's settings for a text whose dictionary and content fit in an 8 KiB window: the
 * same stream format (any raw DEFLATE window up to 32 KiB inflates with DEFLATE_OPTIONS), a
 * ~30 KiB deflate state instead of ~260 KiB. Allocating that state dominated each small
 * snapshot's encoding (60–70 µs against 40 µs, bench/README.md, session 5).
 */
const SMALL_WINDOW = 1 << 13;
const SMALL_DEFLATE_OPTIONS = { level: 6, windowBits: 13, memLevel: 5 } as const;

/** Why a stored blob did not decode. */
export class CodecError extends Error {}

/** Encodes `text` under `codec`: compressed when it fits `maxBytes`, plain otherwise. */
export function encodeText(codec: TextCodec, text: string): Buffer {
  const utf8 = Buffer.from(text, 'utf8');
  if (utf8.length > codec.maxBytes) return Buffer.concat([Buffer.of(PLAIN_TAG), utf8]);
  const small = utf8.length + codec.dictionary.length <= SMALL_WINDOW;
  const body = deflateRawSync(utf8, {
    ...(small ? SMALL_DEFLATE_OPTIONS : DEFLATE_OPTIONS),
    dictionary: codec.dictionary,
  });
  return Buffer.concat([Buffer.of(codec.tag), body]);
}

/**
 * Decodes a blob written by `encodeText` with the same codec, or throws CodecError saying what
 * is wrong (an unknown tag, a stream that does not inflate, an output over `maxBytes`, text that
 * is not UTF-8). Never returns partial content.
 */
export function decodeText(codec: TextCodec, blob: Uint8Array): string {
  if (blob.length === 0) throw new CodecError(`the ${codec.what} blob is empty`);
  const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  const tag = bytes[0];
  const content = bytes.subarray(1);
  let utf8: Buffer;
  if (tag === PLAIN_TAG) {
    utf8 = content;
  } else if (tag === codec.tag) {
    try {
      utf8 = inflateRawSync(content, {
        dictionary: codec.dictionary,
        windowBits: DEFLATE_OPTIONS.windowBits,
        maxOutputLength: codec.maxBytes,
        finishFlush: constants.Z_FINISH,
      });
    } catch (error) {
      const why =
        (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
          ? `inflates to more than ${codec.maxBytes} bytes`
          : `does not inflate (${(error as Error).message})`;
      throw new CodecError(`the ${codec.what} blob ${why}`);
    }
  } else {
    throw new CodecError(`the ${codec.what} blob has the unknown encoding tag 0x${hex(tag)}`);
  }
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  try {
    return text.decode(utf8);
  } catch {
    throw new CodecError(`the ${codec.what} blob is not UTF-8 text`);
  }
}

function hex(byte: number | undefined): string {
  return (byte ?? 0).toString(16).padStart(2, '0');
}
