/**
 * Units of the envelope algebra: deny-glob rebasing, root meet and order on their meaning,
 * spawn-time narrowing details, the envelope schema, the effective envelope and the guard on its
 * own (lexical paths, no file system).
 */
import { describe, expect, it } from 'vitest';
import type { Target } from '../../policy/decision.ts';
import {
  AuthorityEnvelope,
  createDelegationGuard,
  effectiveEnvelope,
  intersect,
  leq,
  lexicalPathSpace,
  meetRoots,
  normalize,
  normalizeDenyGlob,
  normalizeRoots,
  rebaseGlob,
  rootsLeq,
  SpawnRequest,
} from '../../policy/delegation/index.ts';
import { posixFlavor, windowsFlavor } from '../../policy/paths/index.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';

const space = lexicalPathSpace(posixFlavor);

function root(
  id: string,
  path: string,
  access: WorkspaceRoot['access'],
  extra: Partial<WorkspaceRoot> = {},
): WorkspaceRoot {
  return { id, path, access, primary: false, source: 'workspace', ...extra };
}

function envelope(extra: Partial<AuthorityEnvelope> = {}): AuthorityEnvelope {
  return {
    mode: 'allow',
    tools: ['read_file', 'write_file', 'shell'],
    rules: [],
    roots: [root('w', '/w', 'read-write', { primary: true })],
    secrets: ['s1'],
    standingApprovals: [],
    interaction: 'attended',
    mayDelegate: false,
    ...extra,
  };
}

describe('deny globs moved onto a nested root', () => {
  it('normalizes like the path guard: ./x, /x and x are the same; . and / mean everything', () => {
    expect(['./x', '/x', 'x', 'x/'].map((g) => normalizeDenyGlob(posixFlavor, g))).toEqual([
      'x',
      'x',
      'x',
      'x',
    ]);
    expect(['/', './', '//'].map((g) => normalizeDenyGlob(posixFlavor, g))).toEqual(['**', '**', '**']);
    // A lone `.` is kept as the guard keeps it; below a nested root it counts as denying it.
    expect(normalizeDenyGlob(posixFlavor, '.')).toBe('.');
    expect(rebaseGlob('.', ['a']).hit).toBe(true);
    expect(normalizeDenyGlob(posixFlavor, '')).toBeNull();
    expect(normalizeDenyGlob(windowsFlavor, 'a\\b')).toBe('a/b');
  });

  it.each([
    ['secrets/**', ['src'], false, []],
    ['secrets/**', ['secrets'], true, []],
    ['src/*.key', ['src'], false, ['*.key']],
    ['**/*.pem', ['a', 'b'], false, ['**/*.pem', '*.pem']],
    ['a/*/c', ['a', 'b'], false, ['c']],
    ['a/*/c', ['a', 'b', 'c'], true, []],
    ['**/c/**', ['a', 'c'], true, []],
    ['{b,x}', ['x'], true, []],
    ['B/C', ['b'], false, ['C']],
    ['**', ['a'], true, []],
    ['!b', ['a'], true, []],
    ['{a/b,c}', ['a'], true, []],
    ['x', [], false, ['x']],
  ])('%s below %j: hit %s, residuals %j', (glob, relative, hit, residuals) => {
    expect(rebaseGlob(glob, relative)).toEqual({ hit, residuals });
  });

  it('composes: rebasing by p then q gives the residuals of rebasing by p/q', () => {
    for (const glob of ['**/*.pem', 'a/**/b/*.x', '*/b/**/c', 'a/b/c']) {
      const once = rebaseGlob(glob, ['a', 'b']);
      const twice = rebaseGlob(glob, ['a']).residuals.map((g) => rebaseGlob(g, ['b']));
      expect(twice.some((r) => r.hit)).toBe(once.hit);
      if (!once.hit)
        expect([...new Set(twice.flatMap((r) => r.residuals))].sort()).toEqual([...once.residuals]);
    }
  });
});

describe('root sets on their meaning', () => {
  it('a read-only root nested in a read-write one stays read-only in the meet', () => {
    const parent = [root('w', '/w', 'read-write'), root('docs', '/w/docs', 'read')];
    const child = [root('c', '/w', 'read-write')];
    expect(meetRoots(space, parent, child)).toEqual([
      root('c', '/w', 'read-write'),
      root('docs', '/w/docs', 'read'),
    ]);
    // The per-root check alone ("/w inside /w with rw ≤ rw") would miss the nested read-only root.
    expect(rootsLeq(space, child, parent)).toBe(false);
    expect(rootsLeq(space, meetRoots(space, parent, child), parent)).toBe(true);
  });

  it('a prefix sibling is not inside; case matters on POSIX and not on Windows', () => {
    expect(
      meetRoots(space, [root('p', '/w/proj', 'read-write')], [root('e', '/w/proj-evil', 'read')]),
    ).toEqual([]);
    expect(meetRoots(space, [root('p', '/w/proj', 'read-write')], [root('e', '/w/Proj/x', 'read')])).toEqual(
      [],
    );
    const win = lexicalPathSpace(windowsFlavor);
    expect(
      meetRoots(win, [root('p', 'C:\\W\\Proj', 'read-write')], [root('e', 'c:\\w\\proj\\x', 'read')]),
    ).toEqual([root('e', 'C:\\w\\proj\\x', 'read')]);
  });

  it('the normal form merges roots at one path, pushes outer globs down, and drops roots denied outright', () => {
    const roots = [
      root('b', '/w', 'read-write', { deny: ['./secrets/**', 'a/*.key'] }),
      root('a', '/w', 'read'),
      root('n', '/w/a', 'read-write'),
      root('s', '/w/secrets/x', 'read'),
    ];
    expect(normalizeRoots(space, roots)).toEqual([
      root('a', '/w', 'read', { deny: ['a/*.key', 'secrets/**'] }),
      root('n', '/w/a', 'read-write', { deny: ['*.key'] }),
    ]);
  });

  it('an outer root’s glob denies a path inside a more specific root, so the child keeps it', () => {
    const parent = [root('w', '/w', 'read-write', { deny: ['**/*.pem'] })];
    const child = meetRoots(space, parent, [root('src', '/w/src', 'read-write')]);
    expect(child).toEqual([root('src', '/w/src', 'read-write', { deny: ['**/*.pem', '*.pem'] })]);
    expect(rootsLeq(space, [root('src', '/w/src', 'read-write')], parent)).toBe(false);
  });
});

describe('intersect', () => {
  const opts = { interaction: 'attended' as const, space };

  it('an absent request gets the parent’s authority, minus delegation unless asked for', () => {
    const parent = envelope({
      tools: ['read_file', 'write_file', 'shell', 'spawn_agent'],
      mayDelegate: true,
    });
    const { envelope: child, narrowed } = intersect(parent, {}, opts);
    expect(child).toEqual({
      ...normalize(parent, space),
      tools: ['read_file', 'shell', 'write_file'],
      mayDelegate: false,
    });
    expect(narrowed).toEqual([{ kind: 'tool', item: 'spawn_agent', reason: 'delegation_not_granted' }]);
    expect(intersect(parent, { mayDelegate: true }, opts)).toEqual({
      envelope: normalize(parent, space),
      narrowed: [],
    });
  });

  it('takes the stricter mode and reports a looser request', () => {
    const parent = envelope({ mode: 'ask' });
    expect(intersect(parent, { mode: 'allow' }, opts).narrowed).toContainEqual({
      kind: 'mode',
      item: 'allow',
      reason: 'parent_mode_stricter',
    });
    expect(intersect(parent, { mode: 'deny' }, opts).envelope.mode).toBe('deny');
  });

  it('keeps the parent’s rules and adds the request’s', () => {
    const parent = envelope({ rules: [{ id: 'p', tool: 'shell', effect: 'ask' }] });
    const { envelope: child } = intersect(
      parent,
      { rules: [{ id: 'c', risk: 'exec', effect: 'deny' }] },
      opts,
    );
    expect(child.rules.map((r) => r.id)).toEqual(['p', 'c']);
  });

  it('keeps the deny globs of a refused root on the requested roots nested in it (monotonicity)', () => {
    // Found by the monotonicity law: "read /w/a, and nothing under /w" under a parent holding
    // only /w/a must not read /w/a (with /w refused, its "**" used to be lost).
    const parent = envelope({ roots: [root('a', '/w/a', 'read', { primary: true })] });
    const { envelope: child, narrowed } = intersect(
      parent,
      { roots: [{ path: '/w/a' }, { path: '/w', deny: ['**'] }] },
      opts,
    );
    expect(child.roots).toEqual([]);
    expect(narrowed).toEqual(
      expect.arrayContaining([
        { kind: 'root', item: '/w', reason: 'outside_parent_roots' },
        { kind: 'root', item: '/w/a', reason: 'denied_by_request' },
      ]),
    );
    const partial = intersect(
      parent,
      { roots: [{ path: '/w/a' }, { path: '/w', deny: ['a/tmp/**'] }] },
      opts,
    ).envelope;
    expect(partial.roots.map((r) => [r.path, r.deny])).toEqual([['/w/a', ['tmp/**']]]);
  });

  it('refuses roots outside, denied by the parent, or unreadable, and names them', () => {
    const parent = envelope({ roots: [root('w', '/w', 'read-write', { deny: ['private'] })] });
    const { envelope: child, narrowed } = intersect(
      parent,
      { roots: [{ path: '/w/private/x' }, { path: '/other' }, { path: '/w/ok', id: 'mine', deny: ['tmp'] }] },
      opts,
    );
    expect(narrowed).toEqual([
      { kind: 'root', item: '/other', reason: 'outside_parent_roots' },
      { kind: 'root', item: '/w/private/x', reason: 'denied_by_parent' },
    ]);
    // The parent has no primary root, so it resolves no relative path: neither may its child.
    expect(child.roots).toEqual([root('mine', '/w/ok', 'read-write', { primary: false, deny: ['tmp'] })]);
    const withPrimary = envelope({
      roots: [root('w', '/w', 'read-write', { primary: true, deny: ['private'] })],
    });
    expect(intersect(withPrimary, { roots: [{ path: '/w/ok', id: 'mine' }] }, opts).envelope.roots).toEqual([
      root('mine', '/w/ok', 'read-write', { primary: true }),
    ]);
    const noPrimary = envelope({ roots: [root('w', '/w', 'read-write')] });
    expect(intersect(noPrimary, { roots: [{ path: 'rel' }] }, opts).narrowed).toEqual([
      { kind: 'root', item: 'rel', reason: 'invalid_root_path' },
    ]);
  });

  it('root ids stay unique: a requested id taken by another root gets a suffix', () => {
    const parent = envelope({
      roots: [root('w', '/w', 'read-write', { primary: true }), root('docs', '/w/docs', 'read')],
    });
    const { envelope: child } = intersect(
      parent,
      { roots: [{ path: '/w/docs' }, { path: '/w/src', id: 'docs' }] },
      opts,
    );
    expect(child.roots.map((r) => [r.id, r.path])).toEqual([
      ['docs', '/w/docs'],
      ['docs#2', '/w/src'],
    ]);
  });

  it('carries a parent root nested inside a requested root, with its own access and globs', () => {
    const parent = envelope({
      roots: [
        root('w', '/w', 'read-write', { primary: true }),
        root('vendor', '/w/vendor', 'read', { deny: ['*.lock'] }),
      ],
    });
    const { envelope: child, narrowed } = intersect(
      parent,
      { roots: [{ path: '/w', access: 'read-write' }] },
      opts,
    );
    expect(narrowed).toEqual([]);
    expect(child.roots).toEqual([
      root('w', '/w', 'read-write', { primary: true }),
      root('vendor', '/w/vendor', 'read', { deny: ['*.lock'] }),
    ]);
  });

  it('keeps secrets and standing approvals only when the parent holds exactly them', () => {
    const held = { id: 'sa', ownerTaskId: 't', tool: 'http_request', target: 'https://a' };
    const parent = envelope({ standingApprovals: [held] });
    const { envelope: child, narrowed } = intersect(
      parent,
      { secrets: ['s1', 's2'], standingApprovals: [{ ...held, target: 'https://b' }, held] },
      opts,
    );
    expect(child.secrets).toEqual(['s1']);
    expect(child.standingApprovals).toEqual([held]);
    expect(narrowed).toEqual([
      { kind: 'secret', item: 's2', reason: 'not_held_by_parent' },
      { kind: 'standing-approval', item: 'sa', reason: 'not_held_by_parent' },
    ]);
  });

  it('a parent that may not delegate cannot give delegation; unattended wins', () => {
    const parent = envelope({ mayDelegate: false, interaction: 'unattended' });
    const { envelope: child, narrowed } = intersect(
      parent,
      { mayDelegate: true },
      { ...opts, interaction: 'attended' },
    );
    expect(child.mayDelegate).toBe(false);
    expect(child.interaction).toBe('unattended');
    expect(narrowed).toContainEqual({
      kind: 'delegation',
      item: 'mayDelegate',
      reason: 'parent_may_not_delegate',
    });
    expect(intersect(envelope(), {}, { ...opts, interaction: 'unattended' }).envelope.interaction).toBe(
      'unattended',
    );
  });
});

describe('schemas and ordering', () => {
  it('the envelope schema refuses relative root paths and unknown fields', () => {
    expect(AuthorityEnvelope.safeParse(envelope()).success).toBe(true);
    expect(AuthorityEnvelope.safeParse(envelope({ roots: [root('r', 'rel', 'read')] })).success).toBe(false);
    expect(AuthorityEnvelope.safeParse({ ...envelope(), extra: 1 }).success).toBe(false);
    expect(
      SpawnRequest.safeParse({ tools: ['read_file'], roots: [{ path: 'src', access: 'read' }] }).success,
    ).toBe(true);
    expect(SpawnRequest.safeParse({ roots: [{ path: 'src', access: 'admin' }] }).success).toBe(false);
  });

  it('⊑ compares mode, tools, rules (more is less), secrets, approvals, delegation and interaction', () => {
    const b = envelope({ rules: [{ id: 'r', tool: 'shell', effect: 'ask' }], mayDelegate: true });
    expect(leq(b, b, space)).toBe(true);
    expect(leq({ ...b, mode: 'deny' }, b, space)).toBe(true);
    expect(leq(b, { ...b, mode: 'ask' }, space)).toBe(false);
    expect(leq({ ...b, rules: [] }, b, space)).toBe(false);
    expect(leq(b, { ...b, rules: [] }, space)).toBe(true);
    expect(leq({ ...b, tools: [...b.tools, 'edit_file'] }, b, space)).toBe(false);
    expect(leq({ ...b, secrets: ['s9'] }, b, space)).toBe(false);
    expect(leq(b, { ...b, mayDelegate: false }, space)).toBe(false);
    expect(leq(b, { ...b, interaction: 'unattended' }, space)).toBe(false);
  });
});

describe('effective envelope and the guard on their own', () => {
  it('the effective envelope keeps the child’s own labels and primary root', () => {
    const parent = envelope({ roots: [root('top', '/w', 'read-write', { primary: true })] });
    const own = envelope({
      roots: [root('src', '/w/src', 'read-write', { primary: true, source: 'task' })],
      mode: 'ask',
    });
    const live = { ...parent, mode: 'allow' as const, roots: [root('top', '/w', 'read')] };
    expect(effectiveEnvelope([live], own, space).roots).toEqual([
      root('src', '/w/src', 'read', { primary: true, source: 'task' }),
    ]);
    expect(effectiveEnvelope([live], own, space).mode).toBe('ask');
  });

  const target = (resolved: string, argument = 'path'): Target => ({
    argument,
    input: resolved,
    resolved,
    root: 'x',
    access: 'read-write',
  });

  it('checks every ancestor, with lexical paths by default', () => {
    const top = envelope({
      roots: [root('w', '/w', 'read-write', { deny: ['.git/**'] }), root('d', '/w/docs', 'read')],
    });
    const mid = envelope({ roots: [root('w', '/w', 'read-write')], tools: ['read_file', 'write_file'] });
    const guard = createDelegationGuard(() => [top, mid]);
    expect(guard.check('write_file', 'write-local', [target('/w/src/a.ts')])).toBeNull();
    expect(guard.check('shell', 'exec', [])).toMatchObject({ rule: { id: 'delegation.tool-not-delegated' } });
    expect(guard.check('write_file', 'write-local', [target('/w/docs/a.md')])).toMatchObject({
      reason: 'exceeds_parent_authority',
      rule: { id: 'delegation.read-only-delegated-root', source: 'delegation' },
    });
    expect(guard.check('read_file', 'read', [target('/w/docs/a.md')])).toBeNull();
    expect(guard.check('read_file', 'read', [target('/w/.git/config')])).toMatchObject({
      rule: { id: 'delegation.path-denied' },
    });
    expect(guard.check('read_file', 'read', [target('/w-evil/a')])).toMatchObject({
      rule: { id: 'delegation.outside-delegated-roots' },
    });
    expect(guard.check('read_file', 'read', [target('relative/a')])).toMatchObject({
      rule: { id: 'delegation.unresolvable-target' },
    });
    // Targets without a resolved path (an external target) are not the roots' business.
    expect(guard.check('read_file', 'read', [{ ...target('x'), resolved: null }])).toBeNull();
  });

  it('a shell command writing under a read-only ancestor root is refused; its cwd there is fine', () => {
    const top = envelope({ roots: [root('w', '/w', 'read')] });
    const guard = createDelegationGuard(() => [top]);
    expect(guard.check('shell', 'exec', [target('/w/src', 'cwd')])).toBeNull();
    expect(
      guard.check('shell', 'exec', [target('/w/src', 'cwd'), target('/w/out.txt', 'command')]),
    ).toMatchObject({
      rule: { id: 'delegation.read-only-delegated-root' },
    });
  });
});
