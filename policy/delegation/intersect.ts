/**
 * Spawn-time narrowing: a child's envelope from its parent's and what the child asks for
 * (DESIGN.md §6). A request for more is narrowed, and every narrowing is reported.
 */
import { stricterMode, MODE_STRICTNESS, type Interaction } from '../risk.ts';
import { isInside, type AbsolutePath } from '../paths/index.ts';
import type { WorkspaceRoot } from '../roots.ts';
import type { AuthorityEnvelope, Narrowing, RequestedRoot, SpawnRequest } from './envelope.ts';
import { SPAWN_TOOL } from './envelope.ts';
import { compareText, normalizeDenyGlobs, rebaseGlob } from './globs.ts';
import { envelopeTools, meetInteraction, onePrimary, ruleKey, sortedUnique, standingKey } from './lattice.ts';
import { meetPlaced, placeRoots, viewAt, type PlacedRoot } from './root-lattice.ts';
import { pathKey, type PathSpace } from './space.ts';

/** What `intersect` needs besides the two envelopes. */
export interface IntersectOptions {
  /** The interaction mode of the surface the child runs for. */
  readonly interaction: Interaction;
  /** How root paths are canonicalized and compared (use the run's path guard). */
  readonly space: PathSpace;
}

/** A child's envelope and what was refused on the way. */
export interface Intersection {
  readonly envelope: AuthorityEnvelope;
  readonly narrowed: readonly Narrowing[];
}

interface Requested {
  readonly request: RequestedRoot;
  readonly placed: PlacedRoot;
}

function place(
  space: PathSpace,
  parent: AuthorityEnvelope,
  parentPlaced: readonly PlacedRoot[],
  requested: readonly RequestedRoot[],
  narrowed: Narrowing[],
): { inside: Requested[]; outside: PlacedRoot[] } {
  const out: Requested[] = [];
  const outside: PlacedRoot[] = [];
  for (const request of requested) {
    const path = space.canonical(request.path, parent.roots);
    if (path === null) {
      narrowed.push({ kind: 'root', item: request.path, reason: 'invalid_root_path' });
      continue;
    }
    const container = deepestContaining(space, parentPlaced, path);
    if (container === null) {
      narrowed.push({ kind: 'root', item: request.path, reason: 'outside_parent_roots' });
      // Not granted, but its deny globs still bind the requested roots nested inside it: a
      // request "read x, and nothing under y" must not read x/… when y itself is refused.
      outside.push({
        root: {
          id: request.id ?? 'refused',
          path: path.path,
          access: request.access ?? 'read-write',
          primary: false,
          source: 'task',
          deny: normalizeDenyGlobs(space.flavor, request.deny ?? []),
        },
        path,
      });
      continue;
    }
    const relative = path.segments.slice(container.path.segments.length);
    const root: WorkspaceRoot = {
      id:
        request.id ??
        (relative.length === 0 ? container.root.id : `${container.root.id}/${relative.join('/')}`),
      path: path.path,
      access: request.access ?? 'read-write',
      primary: request.primary ?? false,
      source: container.root.source,
      deny: normalizeDenyGlobs(space.flavor, request.deny ?? []),
    };
    out.push({ request, placed: { root, path } });
  }
  return { inside: bindRefusedDenies(space, out, outside, narrowed), outside };
}

/**
 * A refused root grants nothing, but its deny globs still bind the requested roots nested in it
 * (a request "read x/y, and nothing under x" must not read x/y because x itself was refused):
 * they are rebased onto each nested root; one that denies the nested root itself drops it.
 */
function bindRefusedDenies(
  space: PathSpace,
  inside: readonly Requested[],
  refused: readonly PlacedRoot[],
  narrowed: Narrowing[],
): Requested[] {
  const out: Requested[] = [];
  for (const r of inside) {
    let deny = [...(r.placed.root.deny ?? [])];
    let dropped = false;
    for (const o of refused) {
      if (!isInside(space.flavor, o.path, r.placed.path)) continue;
      const relative = r.placed.path.segments.slice(o.path.segments.length);
      for (const glob of o.root.deny ?? []) {
        const rebased = rebaseGlob(glob, relative);
        if (rebased.hit) dropped = true;
        deny = [...deny, ...rebased.residuals];
      }
    }
    if (dropped) {
      narrowed.push({ kind: 'root', item: r.request.path, reason: 'denied_by_request' });
      continue;
    }
    const root = { ...r.placed.root, deny: normalizeDenyGlobs(space.flavor, deny) };
    out.push({ request: r.request, placed: { root, path: r.placed.path } });
  }
  return out;
}

function deepestContaining(
  space: PathSpace,
  placed: readonly PlacedRoot[],
  path: AbsolutePath,
): PlacedRoot | null {
  let best: PlacedRoot | null = null;
  for (const r of placed) {
    if (!isInside(space.flavor, r.path, path)) continue;
    if (best === null || r.path.segments.length > best.path.segments.length) best = r;
  }
  return best;
}

/**
 * The child's roots: the meet of the parent's roots and the requested ones, labelled with the
 * parent's id where a root sits at a parent root's path and with the request's otherwise (made
 * unique with a `#n` suffix, so a target's root id names one root). The
 * primary root is the requested primary, else the parent's primary, else the first requested
 * root that survived.
 */
function childRoots(
  space: PathSpace,
  parentPlaced: readonly PlacedRoot[],
  placedRequest: { readonly inside: readonly Requested[]; readonly outside: readonly PlacedRoot[] },
  narrowed: Narrowing[],
): WorkspaceRoot[] {
  const requested = placedRequest.inside;
  const met = meetPlaced(
    space,
    parentPlaced,
    requested.map((r) => r.placed),
  );
  const key = (p: AbsolutePath): string => pathKey(space.flavor, p);
  const byKey = new Map(met.map((r) => [key(r.path), r.root]));
  for (const { request, placed } of requested) {
    const got = byKey.get(key(placed.path));
    if (got === undefined) {
      const parentDenies = viewAt(space, parentPlaced, placed.path).denied;
      narrowed.push({
        kind: 'root',
        item: request.path,
        reason: parentDenies ? 'denied_by_parent' : 'denied_by_request',
      });
    } else if (request.access === 'read-write' && got.access === 'read') {
      if (viewAt(space, parentPlaced, placed.path).access === 'read')
        narrowed.push({ kind: 'access', item: request.path, reason: 'parent_root_read_only' });
    }
  }
  const labels = new Map<string, WorkspaceRoot>();
  for (const r of [...requested.map((q) => q.placed), ...parentPlaced]) labels.set(key(r.path), r.root);
  const preferred = [
    ...requested.filter((r) => r.request.primary === true).map((r) => r.placed.path),
    ...parentPlaced.filter((r) => r.root.primary).map((r) => r.path),
    ...requested.map((r) => r.placed.path),
  ].map(key);
  const primary = preferred.find((k) => byKey.has(k)) ?? null;
  const used = new Set<string>();
  return met.map((r) => {
    const k = key(r.path);
    const label = labels.get(k) ?? r.root;
    return { ...r.root, id: uniqueId(label.id, used), source: label.source, primary: k === primary };
  });
}

/** `id`, or `id#2`, `id#3`, … when an earlier root of the child already has it. */
function uniqueId(id: string, used: Set<string>): string {
  let candidate = id;
  for (let n = 2; used.has(candidate); n++) candidate = `${id}#${n}`;
  used.add(candidate);
  return candidate;
}

/**
 * The child's envelope: the stricter mode; the requested tools the parent has (absent: the
 * parent's); the parent's rules plus the requested ones; requested roots lying inside a parent
 * root, with the lesser access, the union of the parent's globs (rebased, see `globs.ts`) and
 * the requested ones, and any parent root nested inside a requested root kept with its own
 * access and globs (absent: the parent's roots); the requested secrets and standing approvals
 * the parent holds (absent: the parent's); the surface's interaction, `unattended` if either is;
 * delegation only when asked for and the parent may. Guarantees `envelope ⊑ parent` and reports
 * every refused item in `narrowed`, in the order mode, tools, roots, secrets, standing
 * approvals, delegation.
 */
export function intersect(
  parent: AuthorityEnvelope,
  request: SpawnRequest,
  opts: IntersectOptions,
): Intersection {
  const { space } = opts;
  const narrowed: Narrowing[] = [];

  let mode = parent.mode;
  if (request.mode !== undefined) {
    mode = stricterMode(parent.mode, request.mode);
    if (MODE_STRICTNESS[request.mode] < MODE_STRICTNESS[parent.mode])
      narrowed.push({ kind: 'mode', item: request.mode, reason: 'parent_mode_stricter' });
  }

  const mayDelegate = parent.mayDelegate && request.mayDelegate === true;
  const parentTools = new Set(parent.tools);
  const wanted = request.tools === undefined ? parent.tools : sortedUnique(request.tools);
  for (const t of wanted) {
    if (!parentTools.has(t)) narrowed.push({ kind: 'tool', item: t, reason: 'not_in_parent_tools' });
    else if (t === SPAWN_TOOL && !mayDelegate)
      narrowed.push({ kind: 'tool', item: t, reason: 'delegation_not_granted' });
  }
  const tools = envelopeTools(
    wanted.filter((t) => parentTools.has(t)),
    mayDelegate,
  );

  const rules = [...parent.rules];
  const seenRules = new Set(rules.map(ruleKey));
  for (const r of request.rules ?? []) if (!seenRules.has(ruleKey(r))) rules.push(r);

  const parentPlaced = placeRoots(space, parent.roots);
  const rootsAsMet =
    request.roots === undefined
      ? onePrimary(meetPlaced(space, parentPlaced, parentPlaced).map((r) => r.root))
      : childRoots(
          space,
          parentPlaced,
          place(space, parent, parentPlaced, request.roots, narrowed),
          narrowed,
        );
  // A parent without exactly one primary root resolves no relative path (the guard refuses it as
  // ambiguous or missing); its child must not resolve them either, or it could do what the parent
  // cannot. Found by the law "parent denies ⇒ child denies" with two primary parent roots.
  const parentPrimaries = parent.roots.filter((r) => r.primary).length;
  const roots =
    parentPrimaries === 1 ? rootsAsMet : rootsAsMet.map((r) => (r.primary ? { ...r, primary: false } : r));

  const parentSecrets = new Set(parent.secrets);
  for (const s of request.secrets ?? [])
    if (!parentSecrets.has(s)) narrowed.push({ kind: 'secret', item: s, reason: 'not_held_by_parent' });
  const secrets = sortedUnique((request.secrets ?? parent.secrets).filter((s) => parentSecrets.has(s)));

  const parentStanding = new Set(parent.standingApprovals.map(standingKey));
  for (const a of request.standingApprovals ?? [])
    if (!parentStanding.has(standingKey(a)))
      narrowed.push({ kind: 'standing-approval', item: a.id, reason: 'not_held_by_parent' });
  const standingApprovals = (request.standingApprovals ?? parent.standingApprovals)
    .filter((a) => parentStanding.has(standingKey(a)))
    .filter((a, i, all) => all.findIndex((b) => standingKey(b) === standingKey(a)) === i)
    .sort((a, b) => compareText(standingKey(a), standingKey(b)));

  if (request.mayDelegate === true && !parent.mayDelegate)
    narrowed.push({ kind: 'delegation', item: 'mayDelegate', reason: 'parent_may_not_delegate' });

  return {
    envelope: {
      mode,
      tools,
      rules,
      roots,
      secrets,
      standingApprovals,
      interaction: meetInteraction(parent.interaction, opts.interaction),
      mayDelegate,
    },
    narrowed,
  };
}
