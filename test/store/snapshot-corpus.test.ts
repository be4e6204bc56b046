import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RecordRejectedError, parseRunSnapshot } from '../../store/index.ts';
import { openTemp } from './helpers.ts';

const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'snapshots');
const historical = readdirSync(join(CORPUS, 'historical')).filter((f) => f.endsWith('.json'));
const negative = readdirSync(join(CORPUS, 'negative')).filter((f) => f.endsWith('.json'));

function read(folder: string, file: string): { path: string; text: string } {
  const path = join(CORPUS, folder, file);
  return { path, text: readFileSync(path, 'utf8') };
}

describe('run snapshot golden corpus', () => {
  it('has historical and negative files', () => {
    expect(historical.length).toBeGreaterThanOrEqual(4);
    expect(negative.length).toBeGreaterThanOrEqual(15);
  });

  it.each(historical)('loads historical %s unchanged', (file) => {
    const { path, text } = read('historical', file);
    const loaded = parseRunSnapshot(text, path);
    expect(loaded).toEqual(JSON.parse(text));
  });

  it.each(historical)('round-trips historical %s through the store', (file) => {
    const { path, text } = read('historical', file);
    const { store } = openTemp();
    const imported = store.snapshots.importEnvelope(text, path);
    const original = JSON.parse(text) as { runId: string; status: string };
    expect(store.snapshots.get(original.runId)).toEqual(imported);
    expect(imported).toEqual(original);
    expect(store.snapshots.list()).toEqual([
      expect.objectContaining({ runId: original.runId, status: original.status }),
    ]);
  });

  it.each(negative)('refuses negative %s with the code in its name, writing nothing', (file) => {
    const { path, text } = read('negative', file);
    const code = file.split('--')[0];
    let error: unknown;
    try {
      parseRunSnapshot(text, path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RecordRejectedError);
    expect((error as RecordRejectedError).code).toBe(code);
    expect((error as RecordRejectedError).message).toContain(path);

    const { store } = openTemp();
    expect(() => store.snapshots.importEnvelope(text, path)).toThrow(expect.objectContaining({ code }));
    expect(store.snapshots.list()).toEqual([]);
  });

  it('leaves the prototype of plain objects untouched after refusing __proto__ keys', () => {
    const { path, text } = read('negative', 'forbidden_key--proto-top-level.json');
    expect(() => parseRunSnapshot(text, path)).toThrow();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });
});
