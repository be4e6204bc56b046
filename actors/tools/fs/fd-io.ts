/** Asynchronous reads and writes on raw descriptors (the verified ones of `policy/paths`). */
import * as fs from 'node:fs';

/** Reads up to `length` bytes at `position` into `buffer`; resolves with the count read. */
export function readAt(fd: number, buffer: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.read(fd, buffer, 0, length, position, (error, bytesRead) =>
      error ? reject(error) : resolve(bytesRead),
    );
  });
}

/** Writes all of `data` at offset 0 onwards. */
export async function writeAll(fd: number, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.byteLength) {
    offset += await new Promise<number>((resolve, reject) => {
      fs.write(fd, data, offset, data.byteLength - offset, offset, (error, written) =>
        error ? reject(error) : resolve(written),
      );
    });
  }
}

/** Reads the whole file behind `fd`, refusing beyond `maxBytes` (returns null then). */
export async function readAllCapped(fd: number, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  const chunkSize = 64 * 1024;
  for (;;) {
    const buffer = Buffer.allocUnsafe(chunkSize);
    const n = await readAt(fd, buffer, chunkSize, total);
    if (n === 0) break;
    total += n;
    if (total > maxBytes) return null;
    chunks.push(buffer.subarray(0, n));
  }
  return Buffer.concat(chunks, total);
}

/** Whether `sample` looks binary (contains a NUL byte). */
export function looksBinary(sample: Uint8Array): boolean {
  return sample.includes(0);
}
