import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import { createShellAnalyzer } from '../../policy/shell/index.ts';
import { KNOWN_PROGRAMS, programEntry } from '../../policy/shell/programs/index.ts';

let analyzer: CommandAnalyzer;
beforeAll(async () => {
  analyzer = await createShellAnalyzer();
});

describe('the known programs (policy/shell/programs/index.ts)', () => {
  it('finds everything about rsync from its one entry', () => {
    const rsync = programEntry('rsync');
    expect(rsync.paths).toBe('table');
    expect(rsync.files).not.toBeNull();
    expect(rsync.trees).not.toBeNull();
    expect(rsync.optionRunner).not.toBeNull();
    expect(rsync.rules.flatMap((r) => r.ids)).toEqual(['hardline.rsync-delete-protected']);
    expect(rsync.commandHead).toBe(true);
    expect(rsync.runs).toBeNull();
  });

  it('says a wrapper is a runner whose inner command is analyzed instead', () => {
    expect(programEntry('sudo')).toMatchObject({ paths: 'runner', runs: { kind: 'wrapper' }, rules: [] });
    expect(programEntry('bash')).toMatchObject({ paths: 'runner', runs: { kind: 'code' } });
    expect(programEntry('docker')).toMatchObject({ paths: 'runner', runs: { kind: 'container' } });
    expect(programEntry('npx').rules.flatMap((r) => r.ids)).toEqual(['hardline.runtime-control']);
  });

  it('gives an unknown name the fail-closed entry, with the rules that match it by pattern', () => {
    expect(programEntry('frobnicate')).toMatchObject({ paths: 'probed', files: null, runs: null, rules: [] });
    expect(programEntry('mkfs.ext4').rules.flatMap((r) => r.ids)).toEqual(['hardline.mkfs']);
    expect(programEntry('ls').paths).toBe('table');
    expect(programEntry('echo').paths).toBe('none');
    expect(programEntry('constructor')).toMatchObject({ paths: 'probed', files: null, runs: null });
  });

  it('lists each known name once, sorted', () => {
    expect(new Set(KNOWN_PROGRAMS).size).toBe(KNOWN_PROGRAMS.length);
    expect([...KNOWN_PROGRAMS].sort()).toEqual(KNOWN_PROGRAMS);
    for (const n of ['rsync', 'sudo', 'git', 'find', 'tar', 'gpg', 'echo'])
      expect(KNOWN_PROGRAMS).toContain(n);
  });

  it('agrees with the analysis: a program it calls probed has its path arguments probed', () => {
    const probed = KNOWN_PROGRAMS.map(programEntry).filter(
      (e) => e.paths === 'probed' && e.rules.length === 0 && e.optionRunner === null,
    );
    expect(probed.length).toBeGreaterThan(0);
    for (const e of probed) {
      const a = analyzer.analyze(`${e.name} ./some-file`);
      expect(a.kind, e.name).toBe('analyzed');
      if (a.kind === 'analyzed') expect(a.probes, e.name).toContain('./some-file');
    }
  });
});
