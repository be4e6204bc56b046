import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The chat's line history file, in the state dir (mode 0600: it holds what the user typed). */
export const HISTORY_FILE = 'chat-history';

/** How many entries are kept. */
export const HISTORY_MAX = 1000;

/**
 * The chat's input history across sessions: one JSON string per line (an entry may span lines),
 * oldest first, capped at `HISTORY_MAX` entries. A missing or unreadable file is an empty
 * history, and a line that is not a JSON string is skipped: history never stops a chat.
 */
export class ChatHistory {
  readonly #entries: string[];
  readonly #file: string;

  constructor(stateDir: string) {
    this.#file = join(stateDir, HISTORY_FILE);
    this.#entries = readEntries(this.#file);
  }

  /** Entries, newest first (readline's order). */
  newestFirst(): string[] {
    return [...this.#entries].reverse();
  }

  /** Adds an entry (an empty one or a repeat of the last is not kept) and saves it. */
  add(entry: string): void {
    if (entry.trim().length === 0 || this.#entries.at(-1) === entry) return;
    this.#entries.push(entry);
    try {
      mkdirSync(dirname(this.#file), { recursive: true, mode: 0o700 });
      if (this.#entries.length > HISTORY_MAX) {
        this.#entries.splice(0, this.#entries.length - HISTORY_MAX);
        writeFileSync(this.#file, this.#entries.map((e) => `${JSON.stringify(e)}\n`).join(''), {
          mode: 0o600,
        });
      } else {
        const fresh = !existsSync(this.#file);
        appendFileSync(this.#file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
        if (fresh) chmodSync(this.#file, 0o600);
      }
    } catch {
      // A history that cannot be saved is not worth stopping the chat for.
    }
  }
}

function readEntries(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const entries: string[] = [];
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (typeof value === 'string') entries.push(value);
    } catch {
      // Not one of ours: skipped.
    }
  }
  return entries.slice(-HISTORY_MAX);
}
