import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../index.ts';

/** The public config loaders with relative paths, as an embedding program calls them. */
describe('parseConfig and loadConfig with relative paths', () => {
  const cwd = process.cwd();
  let dir = '';
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-relcfg-')));
    mkdirSync(join(dir, 'app', 'ws'), { recursive: true });
    process.chdir(dir);
  });
  afterEach(() => {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  });

  const text = JSON.stringify({
    stateDir: 'state',
    workspace: { roots: [{ id: 'ws', path: 'ws', access: 'read-write' }] },
  });

  it('a relative folder is taken from the current folder: every path in the result is absolute', () => {
    const loaded = parseConfig(text, 'snotra.config.json', 'app');
    expect(loaded.dir).toBe(join(dir, 'app'));
    expect(loaded.config.stateDir).toBe(join(dir, 'app', 'state'));
    expect(loaded.config.workspace.roots[0]?.path).toBe(join(dir, 'app', 'ws'));
    expect(parseConfig('{}', '(defaults)', '.').dir).toBe(dir);
  });

  it('loadConfig of a relative file resolves against the current folder, and names the file when it is missing', () => {
    writeFileSync(join(dir, 'app', 'snotra.config.json'), text);
    const loaded = loadConfig('app/snotra.config.json');
    expect(loaded.file).toBe(join(dir, 'app', 'snotra.config.json'));
    expect(loaded.config.workspace.roots[0]?.path).toBe(join(dir, 'app', 'ws'));
    expect(() => loadConfig('nope/snotra.config.json')).toThrow(join(dir, 'nope', 'snotra.config.json'));
  });
});
