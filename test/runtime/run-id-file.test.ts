// The crash-test children keep their run id in a file across SIGKILLs (test/support/run-id-file.ts).
// A kill inside a plain write once left the file empty, and the relaunch waited on run "" until the
// test's deadline (test/mcp/interrupted.test.ts in a clean-clone CI run): an empty file is unknown.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runIdFromFile } from '../support/run-id-file.ts';

describe('the run id file of the crash-test children', () => {
  it('sends the task again when the file is absent or empty, and keeps a written id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'snotra-run-id-'));
    try {
      const file = join(dir, 'run-id.txt');
      let starts = 0;
      const start = async () => `run-${++starts}`;
      expect(await runIdFromFile(file, start)).toBe('run-1');
      expect(readFileSync(file, 'utf8')).toBe('run-1');
      expect(await runIdFromFile(file, start)).toBe('run-1');
      writeFileSync(file, ''); // what a kill between open and write leaves
      expect(await runIdFromFile(file, start)).toBe('run-2');
      expect(starts).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
