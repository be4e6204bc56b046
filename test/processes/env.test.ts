import { describe, expect, it } from 'vitest';
import {
  buildChildEnv,
  isCredentialLikeName,
  parseProcStat,
  CappedBuffer,
  lifelineArgs,
} from '../../runtime/processes/index.ts';

const parent = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  LANG: 'C.UTF-8',
  LC_ALL: 'C',
  TERM: 'xterm',
  TMPDIR: '/tmp',
  USER: 'u',
  SHELL: '/bin/bash',
  NODE_OPTIONS: '--require /tmp/evil.js',
  NODE_PATH: '/tmp/mods',
  GITHUB_TOKEN: 'ghp_x',
  AWS_SECRET_ACCESS_KEY: 'aws',
  OPENAI_API_KEY: 'sk',
  MY_SECRET: 's',
  SSH_AUTH_SOCK: '/tmp/agent',
  LD_PRELOAD: '/tmp/evil.so',
  EDITOR: 'vim',
  SNOTRA_SIDECAR_TOKEN: 'tok',
};

describe('buildChildEnv', () => {
  it('keeps only the allowlist (and LC_*) of the parent', () => {
    expect(buildChildEnv(parent, [], 'linux')).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TERM: 'xterm',
      TMPDIR: '/tmp',
      USER: 'u',
      SHELL: '/bin/bash',
    });
  });

  it('uses the Windows allowlist case-insensitively on win32', () => {
    const env = buildChildEnv(
      { Path: 'C:\\Windows', SystemRoot: 'C:\\Windows', NODE_OPTIONS: 'x', GH_TOKEN: 'y' },
      [],
      'win32',
    );
    expect(env).toEqual({ Path: 'C:\\Windows', SystemRoot: 'C:\\Windows' });
  });

  it('adds configured variables; credential-like names only from secrets', () => {
    const env = buildChildEnv(parent, [
      { name: 'GREETING', value: 'hi', source: 'config' },
      { name: 'GITHUB_TOKEN', value: 'resolved', source: 'secret' },
    ]);
    expect(env.GREETING).toBe('hi');
    expect(env.GITHUB_TOKEN).toBe('resolved');
    for (const name of ['GITHUB_TOKEN', 'API_KEY', 'X_SECRET', 'DB_PASSWORD', 'TOKEN', 'SSH_AUTH_SOCK']) {
      expect(() => buildChildEnv(parent, [{ name, value: 'v', source: 'config' }])).toThrow(
        expect.objectContaining({ code: 'env_variable_refused' }),
      );
    }
  });

  it('never sets NODE_OPTIONS, NODE_PATH or loader variables, even from a secret', () => {
    for (const name of ['NODE_OPTIONS', 'NODE_PATH', 'LD_PRELOAD', 'DYLD_INSERT_LIBRARIES', 'BASH_ENV']) {
      expect(() => buildChildEnv(parent, [{ name, value: 'v', source: 'secret' }])).toThrow(
        expect.objectContaining({ code: 'env_variable_refused' }),
      );
    }
  });

  it('never puts a value into its error message', () => {
    try {
      buildChildEnv(parent, [{ name: 'API_TOKEN', value: 'do-not-print-me', source: 'config' }]);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).not.toContain('do-not-print-me');
      expect((error as Error).message).toContain('API_TOKEN');
    }
  });

  it('classifies credential-like names', () => {
    expect(isCredentialLikeName('GITHUB_TOKEN')).toBe(true);
    expect(isCredentialLikeName('AWS_SECRET_ACCESS_KEY')).toBe(true);
    expect(isCredentialLikeName('KEYBOARD_LAYOUT')).toBe(false);
    expect(isCredentialLikeName('MONKEY')).toBe(false);
  });
});

describe('helpers', () => {
  it('parses /proc stat lines with odd command names', () => {
    expect(parseProcStat('123 (a (b) c) S 1 456 456 0 -1')).toEqual({
      pid: 123,
      state: 'S',
      ppid: 1,
      pgrp: 456,
      start: -1,
    });
    // A whole line: the start time is field 22 (the 20th after the command name).
    const line =
      '77 (sleep) S 1 77 77 0 -1 4194304 90 0 0 0 0 0 0 0 20 0 1 0 123456 2170880 130 18446744073709551615';
    expect(parseProcStat(line)).toMatchObject({ pid: 77, pgrp: 77, start: 123456 });
    expect(parseProcStat('garbage')).toBeNull();
  });

  it('caps buffered output and counts the rest', () => {
    const buffer = new CappedBuffer(5);
    buffer.push(Buffer.from('abc'));
    buffer.push(Buffer.from('defgh'));
    expect(buffer.text()).toBe('abcde');
    expect(buffer.total).toBe(8);
    expect(buffer.truncated).toBe(true);
  });

  it('passes the command to the lifeline wrapper as arguments, never as script text', () => {
    const args = lifelineArgs('/bin/echo', ['$(rm -rf /)', "'"], 1500);
    expect(args[0]).toBe('-c');
    expect(args.slice(2)).toEqual(['snotra-child', '1.5', '/bin/echo', '$(rm -rf /)', "'"]);
  });
});
