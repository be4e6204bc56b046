// The line-range reading of `read_file`, shared by the main thread (async reads) and the worker
// pool (sync reads) so both return exactly the same result. Plain JavaScript for the same reason
// as worker.mjs. Types: line-range.d.mts.
import { Buffer } from 'node:buffer';
import { TextDecoder } from 'node:util';

/** Bytes asked for per read. */
export const READ_CHUNK = 64 * 1024;
/** Bytes of the first read looked at for a NUL byte. */
const BINARY_SAMPLE = 8192;

/**
 * Collects lines `startLine`..`lastWanted` (1-based, inclusive) from chunks read in order from
 * offset 0. Drive it as: while `nextLength()` > 0, read that many bytes at `position` and hand
 * them to `accept` until it says `done` (or `binary`, which the caller turns into an error).
 */
export class LineRangeReader {
  /** Bytes consumed so far (the offset of the next read). */
  position = 0;
  #startLine;
  #lastWanted;
  #maxBytes;
  #maxScan;
  #decoder = new TextDecoder('utf-8');
  /** @type {string[]} */
  #kept = [];
  #keptBytes = 0;
  #line = 1;
  #partial = '';
  #truncated = false;
  /** @type {number | null} */
  #endLine = null;
  #atEnd = false;

  /**
   * @param {number} startLine
   * @param {number} lastWanted
   * @param {number} maxBytes
   * @param {number} maxScan
   */
  constructor(startLine, lastWanted, maxBytes, maxScan) {
    this.#startLine = startLine;
    this.#lastWanted = lastWanted;
    this.#maxBytes = maxBytes;
    this.#maxScan = maxScan;
  }

  /** Bytes to read next at `position`; 0 once `maxScan` bytes were read (then truncated). */
  nextLength() {
    if (this.position >= this.#maxScan) {
      this.#truncated = true;
      return 0;
    }
    return Math.min(READ_CHUNK, this.#maxScan - this.position);
  }

  /**
   * Takes the bytes just read (empty at the end of the file).
   * @param {Uint8Array} bytes
   * @returns {'more' | 'done' | 'binary'}
   */
  accept(bytes) {
    if (this.position === 0 && bytes.subarray(0, Math.min(bytes.length, BINARY_SAMPLE)).includes(0)) {
      return 'binary';
    }
    if (bytes.length === 0) {
      this.#partial += this.#decoder.decode();
      this.#atEnd = true;
      return 'done';
    }
    this.position += bytes.length;
    const parts = (this.#partial + this.#decoder.decode(bytes, { stream: true })).split('\n');
    this.#partial = parts.pop() ?? '';
    for (const text of parts) {
      if (!this.#take(text, this.#line)) return 'done';
      this.#line += 1;
      if (this.#line > this.#lastWanted) return 'done';
    }
    return 'more';
  }

  /** The lines collected; call once, after the last `accept`. */
  finish() {
    let totalLines = null;
    if (this.#atEnd) {
      if (this.#partial.length > 0) {
        this.#take(this.#partial, this.#line);
        this.#line += 1;
      }
      totalLines = this.#line - 1;
    }
    return {
      content: this.#kept.join('\n'),
      startLine: this.#startLine,
      endLine: this.#endLine,
      totalLines,
      truncated: this.#truncated,
    };
  }

  /**
   * @param {string} text
   * @param {number} n
   */
  #take(text, n) {
    if (n < this.#startLine || n > this.#lastWanted) return true;
    const size = Buffer.byteLength(text) + 1;
    if (this.#keptBytes + size > this.#maxBytes) {
      this.#truncated = true;
      return false;
    }
    this.#kept.push(text);
    this.#keptBytes += size;
    this.#endLine = n;
    return true;
  }
}
