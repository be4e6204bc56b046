/** Keeps the last `maxBytes` of a stream of chunks (a child's stderr) for error messages. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly maxBytes = 16 * 1024) {}

  /** Appends a chunk, forgetting the oldest data beyond the limit. */
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.maxBytes && this.chunks.length > 1) {
      const first = this.chunks.shift();
      this.size -= first?.length ?? 0;
    }
  }

  /** The last `lines` complete-or-partial lines, at most `maxChars` characters. */
  tail(lines = 20, maxChars = 2000): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    const out = text
      .split('\n')
      .filter((l) => l.length > 0)
      .slice(-lines)
      .join('\n');
    return out.length > maxChars ? out.slice(out.length - maxChars) : out;
  }
}
