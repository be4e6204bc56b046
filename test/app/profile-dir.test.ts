import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeProfileDir, PROFILE_PREFIX, sweepLeftoverProfiles } from '../../surfaces/app/profile-dir.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-profile-sweep-')));
  dirs.push(d);
  return d;
}

/** A profile folder as a shell with `pid` leaves it, with something in it. */
function profile(parent: string, name: string): string {
  const p = join(parent, name);
  mkdirSync(join(p, 'Default'), { recursive: true });
  writeFileSync(join(p, 'Default', 'Preferences'), '{}');
  return p;
}

const SELF = 4242;
const LIVE = 5151;
const DEAD = 6161;
const alive = (pid: number) => pid === SELF || pid === LIVE;

describe('the app window’s profile folder', () => {
  it('is made in the temp dir with the shell’s pid in its name', () => {
    const t = tmp();
    const p = makeProfileDir(t, 1234);
    expect(basename(p)).toMatch(/^snotra-app-profile-1234-[A-Za-z0-9]{6}$/);
    expect(existsSync(p)).toBe(true);
  });

  it('a leftover of a shell that no longer runs is removed; one of a live shell, and this shell’s own, are kept', () => {
    const t = tmp();
    const dead = profile(t, `${PROFILE_PREFIX}${DEAD}-aB3dE9`);
    const live = profile(t, `${PROFILE_PREFIX}${LIVE}-aB3dE9`);
    const own = profile(t, `${PROFILE_PREFIX}${SELF}-Zz0000`);
    expect(sweepLeftoverProfiles(t, alive, SELF)).toEqual([dead]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(own)).toBe(true);
  });

  it('several leftovers go at once; a second sweep finds nothing', () => {
    const t = tmp();
    const a = profile(t, `${PROFILE_PREFIX}${DEAD}-aaaaaa`);
    const b = profile(t, `${PROFILE_PREFIX}${DEAD + 1}-bbbbbb`);
    expect(sweepLeftoverProfiles(t, alive, SELF).sort()).toEqual([a, b].sort());
    expect(sweepLeftoverProfiles(t, alive, SELF)).toEqual([]);
  });

  it('look-alikes are never touched: other names, an old profile without a pid, pids out of range', () => {
    const t = tmp();
    const names = [
      `${PROFILE_PREFIX}aB3dE9`, // the name before pids were in it
      `${PROFILE_PREFIX}${DEAD}-aB3dE`, // suffix too short
      `${PROFILE_PREFIX}${DEAD}-aB3dE9x`, // too long
      `${PROFILE_PREFIX}${DEAD}-aB3.E9`,
      `x${PROFILE_PREFIX}${DEAD}-aB3dE9`,
      `${PROFILE_PREFIX}0-aB3dE9`, // kill(0, 0) would ask about this process group
      `${PROFILE_PREFIX}-1-aB3dE9`, // kill(-1, 0) would ask about every process
      `${PROFILE_PREFIX}0${DEAD}-aB3dE9`,
      `${PROFILE_PREFIX}4194305-aB3dE9`, // above any Linux pid
      `${PROFILE_PREFIX}99999999999-aB3dE9`,
      `snotra-app-${DEAD}-aB3dE9`,
    ];
    for (const n of names) profile(t, n);
    expect(sweepLeftoverProfiles(t, () => false, SELF)).toEqual([]);
    expect(readdirSync(t).sort()).toEqual([...names].sort());
  });

  it('a symlink or a file with a leftover’s name is not followed or removed, and what a symlink points at stays', () => {
    const t = tmp();
    const outside = profile(tmp(), 'elsewhere');
    symlinkSync(outside, join(t, `${PROFILE_PREFIX}${DEAD}-link00`));
    writeFileSync(join(t, `${PROFILE_PREFIX}${DEAD}-file00`), 'not a folder');
    expect(sweepLeftoverProfiles(t, () => false, SELF)).toEqual([]);
    expect(readdirSync(t).sort()).toEqual([
      `${PROFILE_PREFIX}${DEAD}-file00`,
      `${PROFILE_PREFIX}${DEAD}-link00`,
    ]);
    expect(existsSync(join(outside, 'Default', 'Preferences'))).toBe(true);
  });

  it('a folder owned by another user is left', () => {
    const t = tmp();
    const p = profile(t, `${PROFILE_PREFIX}${DEAD}-aB3dE9`);
    const other = (process.getuid?.() ?? 0) + 1;
    expect(sweepLeftoverProfiles(t, () => false, SELF, other)).toEqual([]);
    expect(existsSync(p)).toBe(true);
  });

  it('a temp dir that cannot be read gives nothing to remove, not an error', () => {
    expect(sweepLeftoverProfiles(join(tmp(), 'missing'), () => false, SELF)).toEqual([]);
  });

  it('by default a pid is alive while its process runs: a profile named with a running pid is kept', () => {
    const t = tmp();
    const running = profile(t, `${PROFILE_PREFIX}${process.pid}-aB3dE9`);
    expect(sweepLeftoverProfiles(t, undefined, SELF)).toEqual([]);
    expect(existsSync(running)).toBe(true);
  });
});
