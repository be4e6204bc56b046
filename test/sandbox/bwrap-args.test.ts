/**
 * The pure translations of a sandbox plan (bubblewrap arguments, the macOS profile), the
 * envelope → confinement mapping, and the search of the host for protected paths.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPathGuard } from '../../policy/paths/index.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import {
  bwrapArgs,
  confinementOf,
  envelopeGrantsNetwork,
  findProtectedPaths,
  hostRulesOf,
  planFor,
  SandboxError,
  sandboxExecProfile,
  type SandboxPlan,
} from '../../runtime/sandbox/index.ts';
import { WORK_BASE } from './support.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PLAN: SandboxPlan = {
  roots: [
    { path: '/w/project/sub', access: 'read' },
    { path: '/w/project', access: 'read-write' },
    { path: '/w/docs', access: 'read' },
  ],
  readOnly: ['/w/project/.git/hooks', '/w/project/.git/config', '/w/docs/.git/hooks'],
  hidden: [
    { path: '/home/u/.ssh', kind: 'dir' },
    { path: '/home/u/.netrc', kind: 'file' },
    { path: '/w/project/.state', kind: 'dir' },
    { path: '/tmp/elsewhere/secret', kind: 'file' },
    { path: '/run/user/1000', kind: 'dir' },
  ],
  network: false,
  cwd: '/w/project',
};

/** The argument pairs/triples of `args` in order, for readable assertions. */
function mounts(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (['--bind', '--ro-bind', '--ro-bind-try'].includes(a)) {
      out.push(`${a} ${args[i + 1]} ${args[i + 2]}`);
      i += 2;
    } else if (['--tmpfs', '--remount-ro', '--dev', '--proc', '--chdir'].includes(a)) {
      out.push(`${a} ${args[i + 1]}`);
      i += 1;
    } else if (a === '--') break;
  }
  return out;
}

describe('bwrapArgs (pure)', () => {
  it('mounts the host read-only, then private kernel views, /tmp and /run, then roots, read-only paths and hidden paths, in that order', () => {
    const args = bwrapArgs(PLAN, ['/bin/sh', '-c', 'echo hi']);
    expect(mounts(args)).toEqual([
      '--ro-bind / /',
      '--dev /dev',
      '--proc /proc',
      '--tmpfs /tmp',
      '--tmpfs /run',
      '--remount-ro /run',
      // Shallowest first; the deeper read-only root covers its part of the writable one.
      '--bind /w/project /w/project',
      '--ro-bind /w/docs /w/docs',
      '--ro-bind /w/project/sub /w/project/sub',
      // The folder holding protected paths is pinned (a mount point cannot be renamed away).
      '--bind /w/project/.git /w/project/.git',
      '--ro-bind /w/project/.git/hooks /w/project/.git/hooks',
      '--ro-bind /w/project/.git/config /w/project/.git/config',
      // Only inside writable roots; /w/docs is read-only already.
      '--tmpfs /home/u/.ssh',
      '--remount-ro /home/u/.ssh',
      '--ro-bind /dev/null /home/u/.netrc',
      '--tmpfs /w/project/.state',
      '--remount-ro /w/project/.state',
      // /tmp/elsewhere and /run/user are out of sight already (private mounts, inside no root).
      '--chdir /w/project',
    ]);
    expect(args.slice(args.indexOf('--'))).toEqual(['--', '/bin/sh', '-c', 'echo hi']);
  });

  it('always drops capabilities and user namespaces, and uses its own PID namespace tied to the parent', () => {
    const args = bwrapArgs(PLAN, ['true']);
    const flags = args.slice(0, args.indexOf('--ro-bind'));
    for (const f of [
      '--unshare-user',
      '--disable-userns',
      '--unshare-pid',
      '--die-with-parent',
      '--new-session',
    ]) {
      expect(flags).toContain(f);
    }
    expect(flags.join(' ')).toContain('--cap-drop ALL');
    expect(flags).toContain('--unshare-net');
  });

  it('keeps the network only when the plan grants it (and then name resolution files under /run)', () => {
    const args = bwrapArgs({ ...PLAN, network: true }, ['true']);
    expect(args).not.toContain('--unshare-net');
    expect(mounts(args)).toContain('--ro-bind-try /run/systemd/resolve /run/systemd/resolve');
  });

  it('at equal depth a read-only root wins over a writable one of the same path', () => {
    const plan: SandboxPlan = {
      ...PLAN,
      roots: [
        { path: '/w/x', access: 'read' },
        { path: '/w/x', access: 'read-write' },
      ],
      readOnly: [],
      hidden: [],
      cwd: '/w/x',
    };
    expect(mounts(bwrapArgs(plan, ['true'])).filter((m) => m.includes('/w/x /w/x'))).toEqual([
      '--bind /w/x /w/x',
      '--ro-bind /w/x /w/x',
    ]);
  });

  it('exposes the host folder of a root under /tmp read-only and hides the sensitive paths it makes visible', () => {
    const plan: SandboxPlan = {
      roots: [{ path: '/tmp/ws/project', access: 'read-write' }],
      readOnly: [],
      hidden: [
        { path: '/tmp/ws/project/.state', kind: 'dir' },
        { path: '/tmp/ws/snotra.config.json', kind: 'file' },
        { path: '/tmp/other/secret', kind: 'file' },
      ],
      network: false,
      cwd: '/tmp/ws/project',
    };
    const m = mounts(bwrapArgs(plan, ['true']));
    // The host folder holding the root is visible read-only (not tmpfs scratch next to the root).
    expect(m.indexOf('--ro-bind /tmp/ws /tmp/ws')).toBeGreaterThan(m.indexOf('--tmpfs /tmp'));
    expect(m.indexOf('--ro-bind /tmp/ws /tmp/ws')).toBeLessThan(
      m.indexOf('--bind /tmp/ws/project /tmp/ws/project'),
    );
    expect(m).toContain('--tmpfs /tmp/ws/project/.state');
    expect(m).toContain('--ro-bind /dev/null /tmp/ws/snotra.config.json');
    expect(m.some((x) => x.includes('/tmp/other'))).toBe(false);
  });
});

describe('a program whose files are under a private mount', () => {
  it('gets its top folder there read-only (never writable, never a root); a program elsewhere adds nothing', () => {
    const plan: SandboxPlan = {
      roots: [{ path: '/w/project', access: 'read-write' }],
      readOnly: [],
      hidden: [],
      network: false,
      cwd: '/w/project',
      programs: ['/tmp/clone/test/fixtures/server.mjs', '/run/tools/bin/server', '/usr/bin/node'],
    };
    const m = mounts(bwrapArgs(plan, ['node', '/tmp/clone/test/fixtures/server.mjs']));
    expect(m.indexOf('--ro-bind /tmp/clone /tmp/clone')).toBeGreaterThan(m.indexOf('--tmpfs /tmp'));
    expect(m).toContain('--ro-bind /run/tools /run/tools');
    expect(m.filter((x) => x.startsWith('--bind ') && x.includes('/tmp/clone'))).toEqual([]);
    expect(m.some((x) => x.includes('/usr/bin/node'))).toBe(false);
    // Without programs the same plan shows nothing of /tmp.
    const bare = mounts(bwrapArgs({ ...plan, programs: [] }, ['true']));
    expect(bare.some((x) => x.includes('/tmp/clone'))).toBe(false);
  });
});

describe('pinned folders', () => {
  it('binds every folder between a writable root and a protected path onto itself, shallowest first, and none in read roots', () => {
    const plan: SandboxPlan = {
      roots: [
        { path: '/w/p', access: 'read-write' },
        { path: '/w/p/ro', access: 'read' },
      ],
      readOnly: ['/w/p/a/b/.git/hooks', '/w/p/ro/x/.git/hooks', '/w/p/.mcp.json'],
      hidden: [{ path: '/w/p/var/state', kind: 'dir' }],
      network: false,
      cwd: '/w/p',
    };
    const m = mounts(bwrapArgs(plan, ['true']));
    const pins = m.filter((x) => x.startsWith('--bind ') && x !== '--bind /w/p /w/p');
    expect(pins).toEqual([
      '--bind /w/p/a /w/p/a',
      '--bind /w/p/var /w/p/var',
      '--bind /w/p/a/b /w/p/a/b',
      '--bind /w/p/a/b/.git /w/p/a/b/.git',
    ]);
    // Pins come before the read-only and hidden mounts they hold.
    expect(m.indexOf('--bind /w/p/a/b/.git /w/p/a/b/.git')).toBeLessThan(
      m.indexOf('--ro-bind /w/p/a/b/.git/hooks /w/p/a/b/.git/hooks'),
    );
  });
});

describe('sandboxExecProfile (macOS, pure)', () => {
  it('denies by default, reads all but hidden paths, writes only writable roots minus never-writable ones, no network', () => {
    const profile = sandboxExecProfile({
      ...PLAN,
      roots: [...PLAN.roots, { path: '/w/q"uote', access: 'read-write' }],
    });
    const lines = profile.trim().split('\n');
    expect(lines[0]).toBe('(version 1)');
    expect(lines[1]).toBe('(deny default)');
    const denyRead = lines.find((l) => l.startsWith('(deny file-read*'));
    expect(denyRead).toContain('(subpath "/home/u/.ssh")');
    expect(denyRead).toContain('(literal "/home/u/.netrc")');
    const allowWrite = lines.find((l) => l.startsWith('(allow file-write*'));
    expect(allowWrite).toContain('(subpath "/w/project")');
    expect(allowWrite).toContain('(subpath "/w/q\\"uote")');
    expect(allowWrite).not.toContain('/w/docs');
    const denyWrite = lines.find((l) => l.startsWith('(deny file-write*'));
    expect(denyWrite).toContain('(subpath "/w/project/.git/hooks")');
    expect(denyWrite).toContain('(subpath "/w/project/sub")');
    // Later rules win in SBPL: the write denials come after the write allowance.
    expect(lines.indexOf(denyWrite as string)).toBeGreaterThan(lines.indexOf(allowWrite as string));
    expect(profile).not.toContain('(allow network*)');
    expect(sandboxExecProfile({ ...PLAN, network: true })).toContain('(allow network*)');
  });
});

describe('envelope → confinement', () => {
  const registry = ToolRegistry.withBuiltins();
  const base = {
    mode: 'allow' as const,
    rules: [],
    roots: [{ path: '/w/p', access: 'read-write' as const }],
  };

  it('grants the network only with an external tool that no rule denies, and never in deny mode', () => {
    expect(envelopeGrantsNetwork({ ...base, tools: ['shell', 'read_file'] }, registry)).toBe(false);
    expect(envelopeGrantsNetwork({ ...base, tools: ['shell', 'http_request'] }, registry)).toBe(true);
    expect(
      envelopeGrantsNetwork(
        {
          ...base,
          tools: ['shell', 'http_request'],
          rules: [{ id: 'no-ext', risk: 'external', effect: 'deny' }],
        },
        registry,
      ),
    ).toBe(false);
    expect(
      envelopeGrantsNetwork(
        {
          ...base,
          tools: ['shell', 'http_request'],
          rules: [{ id: 'ask-ext', risk: 'external', effect: 'ask' }],
        },
        registry,
      ),
    ).toBe(true);
    expect(envelopeGrantsNetwork({ ...base, mode: 'deny', tools: ['http_request'] }, registry)).toBe(false);
    expect(envelopeGrantsNetwork({ ...base, tools: ['no_such_tool'] }, registry)).toBe(false);
  });

  it("mounts the envelope's own roots with their access (a sub-agent's, not its parent's)", () => {
    const child = { ...base, tools: ['shell'], roots: [{ path: '/w/p/sub', access: 'read' as const }] };
    expect(confinementOf(child, registry)).toEqual({
      roots: [{ path: '/w/p/sub', access: 'read' }],
      network: false,
    });
  });
});

function hostLayout() {
  const dir = realpathSync(mkdtempSync(join(WORK_BASE, 'snotra-sbx-host-')));
  dirs.push(dir);
  const home = join(dir, 'home');
  const root = join(dir, 'root');
  mkdirSync(join(home, 'dotfiles', 'ssh'), { recursive: true });
  symlinkSync(join(home, 'dotfiles', 'ssh'), join(home, '.ssh'));
  mkdirSync(join(home, '.AWS'), { recursive: true });
  writeFileSync(join(home, '.netrc'), 'machine x password y\n');
  for (const d of ['.git/hooks', 'nested/repo/.git/hooks', 'node_modules/pkg/.git/hooks', '.state']) {
    mkdirSync(join(root, d), { recursive: true });
  }
  writeFileSync(join(root, '.git', 'config'), '[core]\n');
  writeFileSync(join(root, '.mcp.json'), '{}\n');
  writeFileSync(join(root, 'nested', '.bashrc'), '\n');
  const guard = createPathGuard({
    home,
    stateDir: join(root, '.state'),
    configFile: join(dir, 'snotra.config.json'),
  });
  return { dir, home, root, rules: hostRulesOf(guard) };
}

describe('finding protected paths on the host', () => {
  it('finds sensitive paths in canonical form (through a symlinked ~/.ssh, in any case) and never-writable paths in the writable roots', async () => {
    const { home, root, rules } = hostLayout();
    const found = await findProtectedPaths(rules, [{ path: root, writable: true }]);
    const hidden = found.sensitive.map((f) => `${f.kind} ${f.path}`);
    expect(hidden).toEqual(
      expect.arrayContaining([
        `dir ${join(home, 'dotfiles', 'ssh')}`,
        `dir ${join(home, '.AWS')}`,
        `file ${join(home, '.netrc')}`,
        `dir ${join(root, '.state')}`,
      ]),
    );
    expect(found.neverWritable).toEqual(
      expect.arrayContaining([
        join(root, '.git', 'hooks'),
        join(root, '.git', 'config'),
        join(root, '.mcp.json'),
        join(root, 'nested', 'repo', '.git', 'hooks'),
        join(root, 'nested', '.bashrc'),
      ]),
    );
    // Package trees are not searched.
    expect(found.neverWritable.some((p) => p.includes('node_modules'))).toBe(false);
    expect(found.complete).toBe(true);
  });

  it('says when the search stopped at its limit', async () => {
    const { root, rules } = hostLayout();
    const found = await findProtectedPaths(rules, [{ path: root, writable: true }], {
      maxDirectories: 2,
      maxDepth: 12,
    });
    expect(found.complete).toBe(false);
  });

  it('refuses a working directory outside every root, and drops roots that do not exist', async () => {
    const { dir, root, rules } = hostLayout();
    const scope = {
      roots: [
        { path: root, access: 'read-write' as const },
        { path: join(dir, 'missing'), access: 'read' as const },
      ],
      network: false,
    };
    await expect(planFor(scope, dir, rules)).rejects.toBeInstanceOf(SandboxError);
    const plan = await planFor(scope, root, rules);
    expect(plan.roots).toEqual([{ path: root, access: 'read-write' }]);
  });
});

describe("a root's deny globs", () => {
  it('hides what they match inside the root (any case), and nothing else', async () => {
    const { root, rules } = hostLayout();
    mkdirSync(join(root, 'Secrets', 'deep'), { recursive: true });
    writeFileSync(join(root, 'Secrets', 'deep', 'k.pem'), 'x');
    writeFileSync(join(root, 'notes.env'), 'x');
    writeFileSync(join(root, 'keep.txt'), 'x');
    const found = await findProtectedPaths(rules, [
      { path: root, writable: true, deny: ['./secrets', '*.env'] },
    ]);
    const hidden = found.sensitive.map((f) => f.path);
    expect(hidden).toEqual(expect.arrayContaining([join(root, 'Secrets'), join(root, 'notes.env')]));
    expect(hidden).not.toContain(join(root, 'keep.txt'));
    expect(hidden.some((p) => p.includes('deep'))).toBe(false);
  });
});
