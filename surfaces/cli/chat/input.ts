import { createInterface } from 'node:readline';
import type { Paint } from '../run/paint.ts';
import type { CtrlC } from './ctrl-c.ts';

/** What one prompt read: an entry, the end of input (Ctrl-D), Ctrl-C, or the runtime gone meanwhile. */
export type InputResult =
  | { readonly kind: 'entry'; readonly text: string }
  | { readonly kind: 'eof' }
  | { readonly kind: 'interrupt' }
  | { readonly kind: 'gone'; readonly reason: unknown };

/**
 * Joins the lines of a multi-line entry: a line that ends with a backslash goes on on the next
 * line (the backslash is dropped). Returns null while the entry is not finished.
 */
export function joinContinued(lines: readonly string[]): string | null {
  const last = lines.at(-1);
  if (last === undefined || last.endsWith('\\')) return null;
  return lines.map((l, i) => (i < lines.length - 1 ? l.slice(0, -1) : l)).join('\n');
}

/**
 * Reads one entry at the terminal with line editing and the given history (newest first). The
 * terminal is held only while reading: between prompts it is back in its normal mode, so Ctrl-C
 * during a turn is the process's SIGINT. A SIGINT that comes while reading (a Ctrl-C typed just
 * as the prompt took the terminal) is the same Ctrl-C as the key. When `gone` aborts (the runtime
 * stopped under the chat) the prompt ends at once, nothing typed, and gives the terminal back in
 * its normal mode.
 */
export function readEntry(
  history: readonly string[],
  paint: Paint,
  ctrlC: CtrlC,
  gone: AbortSignal,
): Promise<InputResult> {
  if (gone.aborted) return Promise.resolve({ kind: 'gone', reason: gone.reason });
  return new Promise((resolve) => {
    const rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: true,
      history: history.map((h) => h.replace(/\n/g, ' ')),
      historySize: history.length,
      removeHistoryDuplicates: true,
      prompt: `${paint.bold(paint.cyan('›'))} `,
    });
    const lines: string[] = [];
    let done = false;
    let release = (): void => {};
    const onGone = (): void => {
      process.stdout.write('\n');
      finish({ kind: 'gone', reason: gone.reason });
    };
    const finish = (result: InputResult): void => {
      if (done) return;
      done = true;
      release();
      gone.removeEventListener('abort', onGone);
      // Closing the interface takes the terminal out of raw mode.
      rl.close();
      resolve(result);
    };
    gone.addEventListener('abort', onGone, { once: true });
    rl.on('line', (line) => {
      lines.push(line);
      const text = joinContinued(lines);
      if (text === null) {
        rl.setPrompt(`${paint.dim('…')} `);
        rl.prompt();
        return;
      }
      finish({ kind: 'entry', text });
    });
    const interrupted = (): void => {
      process.stdout.write('\n');
      finish({ kind: 'interrupt' });
    };
    release = ctrlC.hold(interrupted);
    rl.on('SIGINT', interrupted);
    rl.on('close', () => finish({ kind: 'eof' }));
    rl.prompt();
  });
}
