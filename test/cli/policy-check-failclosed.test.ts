import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAIL_CLOSED_CASES } from '../policy/shell-failclosed-cases.ts';
import { modesWorkspace, wronglyDecided } from './policy-check-modes.ts';

const ws = modesWorkspace('snotra-cli-fc-', (dir, project) => {
  mkdirSync(join(project, '.snotra'), { recursive: true });
  mkdirSync(join(project, 'build'));
  mkdirSync(join(dir, 'outside'));
  writeFileSync(join(project, 'README.md'), 'readme\n');
  symlinkSync(join(dir, 'outside'), join(project, 'link-out'));
});
afterAll(() => rmSync(ws.dir, { recursive: true, force: true }));

describe('snotra policy check: the fail-closed classes of issue 12 in all three modes', () => {
  it('answers every case as the policy tests expect (one process, --stdin, every mode)', () => {
    expect(wronglyDecided(ws, FAIL_CLOSED_CASES)).toEqual([]);
  });
});
