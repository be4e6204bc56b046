import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { BYPASS_CASES, prepareBypassWorkspace } from '../policy/shell-bypass-cases.ts';
import { modesWorkspace, wronglyDecided } from './policy-check-modes.ts';

const ws = modesWorkspace('snotra-cli-bypass-', prepareBypassWorkspace);
afterAll(() => rmSync(ws.dir, { recursive: true, force: true }));

describe('snotra policy check: the bypass classes of issue 35 in all three modes', () => {
  it('answers every case as the policy tests expect (one process, --stdin, every mode)', () => {
    expect(wronglyDecided(ws, BYPASS_CASES)).toEqual([]);
  });
});
