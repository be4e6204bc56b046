import { describe, expect, it } from 'vitest';
import { createMemoryFs, createPathGuard, windowsFlavor, type MemoryFs } from '../../policy/paths/index.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { root } from './paths-tree.ts';

const HOME = 'C:\\Users\\Ann';
const PROJ = 'C:\\Users\\Ann\\proj';

function memoryFs(): MemoryFs {
  return createMemoryFs(windowsFlavor, [
    { path: `${HOME}\\.ssh\\id_rsa`, kind: 'file' },
    { path: `${HOME}\\AppData\\Roaming\\Microsoft\\Credentials\\blob`, kind: 'file' },
    { path: `${PROJ}\\src\\Main.ts`, kind: 'file' },
    { path: `${PROJ}\\secret.txt`, kind: 'file' },
    { path: `${PROJ}\\.git\\config`, kind: 'file' },
    { path: `${PROJ}\\keys`, kind: 'symlink', target: `${HOME}\\.ssh` },
    { path: `${PROJ}\\junction-out`, kind: 'symlink', target: '\\??\\D:\\outside' },
    { path: `${PROJ}\\rel-out`, kind: 'symlink', target: '..\\..\\Bob' },
    { path: `${PROJ}\\lib`, kind: 'symlink', target: 'src' },
    { path: `${PROJ}\\dangling`, kind: 'symlink', target: 'C:\\nowhere\\x' },
    { path: 'C:\\Users\\Ann\\proj-evil\\x.txt', kind: 'file' },
    { path: 'D:\\outside\\a.txt', kind: 'file' },
    { path: 'C:\\Users\\Bob\\x', kind: 'file' },
    { path: '\\\\fileserver\\team\\docs\\plan.md', kind: 'file' },
  ]);
}

function guard(fs: MemoryFs = memoryFs()) {
  return createPathGuard({
    flavor: windowsFlavor,
    fs,
    home: HOME,
    stateDir: `${HOME}\\AppData\\Local\\snotra`,
    configFile: `${PROJ}\\snotra.config.json`,
  });
}

const roots = (extra: WorkspaceRoot[] = []): WorkspaceRoot[] => [
  root('project', PROJ, 'read-write', { primary: true, deny: ['Secrets/**'] }),
  ...extra,
];

function resolve(input: string, access: 'read' | 'write' = 'read', rootList = roots()) {
  return guard().resolve('path', input, access, rootList);
}

describe('Windows flavor (in-memory file system)', () => {
  it.each([
    ['src\\Main.ts', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['src/Main.ts', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['C:\\Users\\Ann\\proj\\src\\Main.ts', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['c:/Users/Ann/proj/src/Main.ts', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['\\\\?\\C:\\Users\\Ann\\proj\\src\\Main.ts', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['C:\\USERS\\ann\\PROJ\\src\\main.TS', 'C:\\USERS\\ann\\PROJ\\src\\main.TS'],
    ['src\\..\\src\\.\\Main.ts', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['lib\\Main.ts', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['src\\Main.ts.', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['src\\Main.ts . .', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['src\\Main.ts::$DATA', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['src\\Main.ts::$data', 'C:\\Users\\Ann\\proj\\src\\Main.ts'],
    ['..cache\\x', 'C:\\Users\\Ann\\proj\\..cache\\x'],
    ['.', 'C:\\Users\\Ann\\proj'],
  ])('resolves %s inside the project root', (input, expected) => {
    expect(resolve(input)).toMatchObject({ ok: true, target: { resolved: expected, root: 'project' } });
  });

  it('compares roots case-insensitively, whatever slashes and case the root was given with', () => {
    const rootList = [root('project', 'c:/USERS/ann/Proj/', 'read-write', { primary: true })];
    expect(resolve('C:\\Users\\Ann\\proj\\src\\Main.ts', 'write', rootList)).toMatchObject({ ok: true });
    expect(resolve('src\\Main.ts', 'write', rootList)).toMatchObject({ ok: true });
  });

  it.each([
    ['C:\\Users\\Ann\\proj-evil\\x.txt', 'a prefix sibling'],
    ['..\\proj-evil\\x.txt', 'a ..\\ escape to a sibling'],
    ['D:\\outside\\a.txt', 'another drive'],
    ['junction-out\\a.txt', 'a junction with a \\??\\ target'],
    ['rel-out\\x', 'a relative link out'],
    ['\\\\fileserver\\team\\docs\\plan.md', 'a UNC path'],
  ])('refuses %s (%s) as outside_roots', (input) => {
    expect(resolve(input)).toMatchObject({ ok: false, reason: 'outside_roots' });
  });

  it('handles UNC roots and the \\\\?\\UNC\\ form as the same place, case-insensitively', () => {
    const rootList = [root('team', '\\\\fileserver\\team', 'read', { primary: true })];
    for (const input of [
      '\\\\fileserver\\team\\docs\\plan.md',
      '//fileserver/team/docs/plan.md',
      '\\\\?\\UNC\\fileserver\\team\\docs\\plan.md',
      '\\\\FILESERVER\\Team\\DOCS\\plan.md',
      'docs\\plan.md',
    ]) {
      expect(resolve(input, 'read', rootList), input).toMatchObject({ ok: true, target: { root: 'team' } });
    }
    expect(resolve('\\\\fileserver\\other\\x', 'read', rootList)).toMatchObject({ reason: 'outside_roots' });
    expect(resolve('docs\\plan.md', 'write', rootList)).toMatchObject({ reason: 'read_only_root' });
  });

  it.each([
    ['secret.txt:hidden', 'roots.windows-ads'],
    ['secret.txt:hidden:$DATA', 'roots.windows-ads'],
    ['src:$I30:$INDEX_ALLOCATION\\Main.ts', 'roots.windows-ads'],
    ['CON', 'roots.windows-device'],
    ['src\\nul.txt', 'roots.windows-device'],
    ['COM1.log', 'roots.windows-device'],
    ['lpt9', 'roots.windows-device'],
    ['conin$', 'roots.windows-device'],
    ['\\\\.\\PhysicalDrive0', 'roots.windows-device'],
    ['\\\\.\\C:', 'roots.windows-device'],
    ['\\\\?\\Volume{4c1b02c1-d990-11dc-99ae-806e6f6e6963}\\x', 'roots.windows-namespace'],
    ['\\\\?\\GLOBALROOT\\Device\\HarddiskVolume1', 'roots.windows-namespace'],
    ['\\\\localhost\\C$\\Users\\Ann\\.ssh', 'roots.windows-unc'],
    ['\\\\?\\UNC\\127.0.0.1\\c$\\x', 'roots.windows-unc'],
    ['\\\\server', 'roots.windows-unc'],
    ['C:src\\Main.ts', 'roots.windows-ambiguous-path'],
    ['C:', 'roots.windows-ambiguous-path'],
    ['\\Users\\Ann\\proj\\x', 'roots.windows-ambiguous-path'],
    ['/Users/Ann/proj/x', 'roots.windows-ambiguous-path'],
    ['PROGRA~1\\x', 'roots.windows-short-name'],
    ['..\\SSH~1\\id_rsa', 'roots.windows-short-name'],
    ['a<b', 'roots.windows-invalid-character'],
    ['src\\*.ts', 'roots.windows-invalid-character'],
    ['what?', 'roots.windows-invalid-character'],
    ['...\\x', 'roots.windows-dots-segment'],
    ['.. \\x', 'roots.windows-dots-segment'],
    ['dangling', 'roots.dangling-symlink'],
    ['src\\\u0000x', 'roots.nul-byte'],
    ['~bob\\x', 'roots.tilde-user'],
  ])('refuses %s as invalid_path (%s)', (input, ruleId) => {
    expect(resolve(input, 'write')).toMatchObject({
      ok: false,
      reason: 'invalid_path',
      rule: { id: ruleId },
    });
  });

  it('applies deny globs case-insensitively and after stripping trailing dots', () => {
    const fs = memoryFs();
    fs.set({ path: `${PROJ}\\secrets\\token.txt`, kind: 'file' });
    const g = guard(fs);
    for (const input of ['secrets\\token.txt', 'SECRETS\\token.txt', 'secrets.\\token.txt', 'Secrets \\x']) {
      expect(g.resolve('path', input, 'read', roots()), input).toMatchObject({ reason: 'path_denied' });
    }
  });

  it('folds case one UTF-16 unit at a time, as NTFS does (STRASSE is not Straße)', () => {
    const fs = memoryFs();
    fs.set({ path: `${HOME}\\Straße\\plan.md`, kind: 'file' });
    const g = guard(fs);
    const rootList = [root('street', `${HOME}\\Straße`, 'read-write', { primary: true })];
    expect(g.resolve('path', `${HOME}\\STRAßE\\plan.md`, 'write', rootList)).toMatchObject({ ok: true });
    expect(g.resolve('path', `${HOME}\\STRASSE\\plan.md`, 'write', rootList)).toMatchObject({
      reason: 'outside_roots',
    });
  });

  it('reads backslashes in deny globs as separators', () => {
    const rootList = [root('project', PROJ, 'read-write', { primary: true, deny: ['src\\gen\\**'] })];
    expect(resolve('src\\gen\\x.ts', 'write', rootList)).toMatchObject({ reason: 'path_denied' });
    expect(resolve('src\\Main.ts', 'write', rootList)).toMatchObject({ ok: true });
  });

  it.each([
    ['~\\.ſſh\\id_rsa', 'sensitive.ssh'],
    ['~\\.ssh\\id_rsa', 'sensitive.ssh'],
    ['C:\\USERS\\ANN\\.SSH\\ID_RSA', 'sensitive.ssh'],
    ['c:/users/ann/.ssh./id_rsa', 'sensitive.ssh'],
    ['\\\\?\\C:\\Users\\Ann\\.ssh\\id_rsa', 'sensitive.ssh'],
    ['..\\.ssh\\id_rsa::$DATA', 'sensitive.ssh'],
    ['keys\\id_rsa', 'sensitive.ssh'],
    ['D:\\Users\\bob\\.aws\\credentials', 'sensitive.aws'],
    ['~\\AppData\\Roaming\\Microsoft\\Credentials\\blob', 'sensitive.windows-credentials'],
    ['~\\AppData\\Local\\Google\\Chrome\\User Data\\Default\\Cookies', 'sensitive.browser-profiles'],
    ['C:\\Windows\\System32\\config\\SAM', 'sensitive.windows-hives'],
    ['..\\..\\..\\windows\\system32\\CONFIG\\sam', 'sensitive.windows-hives'],
    ['~\\AppData\\Local\\snotra\\runs.db', 'sensitive.runtime-state'],
    ['snotra.config.json ', 'sensitive.runtime-config'],
    ['SNOTRA.CONFIG.JSON.', 'sensitive.runtime-config'],
  ])('denies %s as a sensitive path (%s), for read and write', (input, id) => {
    for (const access of ['read', 'write'] as const) {
      expect(resolve(input, access)).toMatchObject({ ok: false, reason: 'sensitive_path', rule: { id } });
    }
  });

  it.each([
    ['.git\\config', 'never.git-config'],
    ['.GIT\\Config.', 'never.git-config'],
    ['.git\\hooks\\pre-commit', 'never.git-hooks'],
    ['.mcp.json', 'never.mcp-config'],
    ['sub\\.snotra\\x', 'never.agent-config'],
    ['~\\Documents\\PowerShell\\Microsoft.PowerShell_profile.ps1', 'never.shell-rc'],
  ])('refuses to write %s (%s) but lets it be read', (input, id) => {
    const rootList = roots([root('home', HOME, 'read-write')]);
    expect(resolve(input, 'write', rootList)).toMatchObject({
      ok: false,
      reason: 'never_writable_path',
      rule: { id },
    });
    expect(resolve(input, 'read', rootList)).toMatchObject({ ok: true });
  });
});
