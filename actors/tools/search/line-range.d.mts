import type { LineRangeResult } from './protocol.ts';

/** Bytes asked for per read. */
export declare const READ_CHUNK: number;

/** See line-range.mjs: the line-range collector shared by the main thread and the pool. */
export declare class LineRangeReader {
  /** Bytes consumed so far (the offset of the next read). */
  position: number;
  constructor(startLine: number, lastWanted: number, maxBytes: number, maxScan: number);
  /** Bytes to read next at `position`; 0 once the scan cap was reached (then truncated). */
  nextLength(): number;
  /** Takes the bytes just read (empty at the end of the file). */
  accept(bytes: Uint8Array): 'more' | 'done' | 'binary';
  /** The lines collected; call once, after the last `accept`. */
  finish(): LineRangeResult;
}
