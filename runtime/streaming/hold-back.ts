import type { Redactor } from '../../store/index.ts';

/** What the buffer needs from the redactor: the secrets' spans and longest length, and the scrub. */
export type HoldBackRedactor = Pick<Redactor, 'longestSecretLength' | 'secretSpans' | 'redactString'>;

/**
 * The redaction hold-back buffer of one model step's streamed text.
 *
 * Guarantees, for the registered secrets as they are at each call:
 * - `push` releases (redacted) the longest prefix of the unreleased text that no registered
 *   secret can still straddle: it holds back at most the longest secret's length minus one
 *   characters, plus the rest of a secret that is already complete and crosses that point;
 * - the concatenation of everything `push` and `flush` release equals the whole text redacted
 *   at once (`redactString`), so no released piece, nor any run of released pieces, holds a
 *   registered secret;
 * - `flush` releases the rest at the end of the step.
 *
 * A secret registered after part of a text was released cannot be taken back from it; the whole
 * turn (`model.text`) is redacted again at its end. Credential shapes (`Bearer …`) are scrubbed
 * within each released piece only: they have no longest length to hold back.
 */
export class HoldBackBuffer {
  #pending = '';

  constructor(private readonly redactor: HoldBackRedactor) {}

  /** Characters received and not yet released. */
  get held(): number {
    return this.#pending.length;
  }

  /** Takes the next delta; returns the redacted text now safe to release ('' when none). */
  push(delta: string): string {
    this.#pending += delta;
    const longest = this.redactor.longestSecretLength;
    let cut = Math.max(0, this.#pending.length - Math.max(0, longest - 1));
    // Never cut between the two halves of a surrogate pair (an astral character).
    if (cut > 0 && cut < this.#pending.length && isHighSurrogate(this.#pending.charCodeAt(cut - 1))) cut--;
    // A secret already complete that starts before the cut is released whole, never split.
    for (const [start, end] of this.redactor.secretSpans(this.#pending)) {
      if (start >= cut) break;
      if (end > cut) cut = end;
    }
    return this.#release(cut);
  }

  /** Releases everything still held (the step's text has ended). */
  flush(): string {
    return this.#release(this.#pending.length);
  }

  #release(cut: number): string {
    if (cut <= 0) return '';
    const out = this.#pending.slice(0, cut);
    this.#pending = this.#pending.slice(cut);
    return this.redactor.redactString(out);
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
