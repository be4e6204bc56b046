/**
 * The bubblewrap backend's translation of a sandbox plan into `bwrap` arguments — a pure
 * function, so every mount the sandbox makes can be read and tested without running it.
 */
import { depthOf, isWithin, type SandboxPlan } from './plan.ts';

/**
 * Host areas replaced by private, empty file systems. `/tmp` gets a writable tmpfs (commands need
 * scratch space; nothing in it survives the command, and host sockets there — tmux, X11 — are out
 * of reach); `/run` an empty read-only one (the system and session D-Bus, container engines'
 * and systemd's control sockets live there, and a read-only mount does not stop `connect()`).
 */
export const PRIVATE_TMP = '/tmp';
export const PRIVATE_RUN = '/run';
/** Replaced by the namespace's own `/proc` and a minimal `/dev` (null, zero, random, tty…). */
const KERNEL_VIEWS = ['/proc', '/dev'] as const;

/** Namespaces and process settings of every sandbox. */
const PROCESS_FLAGS = [
  // No capabilities inside (as root too: otherwise `umount` would uncover what is hidden), and no
  // user namespaces for the command, where it could get them back.
  '--unshare-user',
  '--disable-userns',
  '--cap-drop',
  'ALL',
  // Its own PID namespace: when the command's main process ends, every process it left behind
  // (`setsid` and double-forked daemons included) is killed by the kernel.
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  // Killed with SIGKILL when bwrap or the runtime dies.
  '--die-with-parent',
  // No controlling terminal (no TIOCSTI into the runtime's terminal).
  '--new-session',
] as const;

/**
 * The host folders made visible (read-only) inside the private `/tmp` and `/run`: for a root
 * under one of them, its top folder there (`/tmp/ws` for a root `/tmp/ws/project/sub`). Without
 * it, the folders bwrap creates on the way to the root's mount point would be writable scratch
 * space in the tmpfs, and a write next to the root would seem to succeed while landing nowhere.
 */
function exposedPrivateFolders(plan: SandboxPlan): string[] {
  const out = new Set<string>();
  // A program's own files there (an MCP server's script under /tmp) are shown the same way.
  for (const path of [...plan.roots.map((r) => r.path), ...(plan.programs ?? [])]) {
    for (const mount of [PRIVATE_TMP, PRIVATE_RUN]) {
      if (path === mount || !isWithin(path, mount)) continue;
      const rest = path.slice(mount.length + 1);
      out.add(`${mount}/${rest.split('/')[0] ?? ''}`);
    }
  }
  return [...out];
}

/** The deepest root holding `path` (a `read` one wins a tie), or undefined. */
function rootOf(path: string, plan: SandboxPlan): SandboxPlan['roots'][number] | undefined {
  let best: SandboxPlan['roots'][number] | undefined;
  for (const r of plan.roots) {
    if (!isWithin(path, r.path)) continue;
    const deeper = best === undefined || depthOf(r.path) > depthOf(best.path);
    const tieRead = best !== undefined && depthOf(r.path) === depthOf(best.path) && r.access === 'read';
    if (deeper || tieRead) best = r;
  }
  return best;
}

/**
 * Folders pinned in place: every folder strictly between a writable root and a protected path
 * in it (`.git` for `.git/hooks`; `a` and `a/b` for `a/b/.state`), bound onto itself so that it
 * is a mount point. A mount point cannot be renamed or removed, so the command cannot move a
 * protected path's folder aside (the mounts would move with it) and put a fresh, unprotected one
 * in its place — e.g. `mv .git old && mkdir -p .git/hooks`, or a crafted state dir where the
 * runtime will look for its own. The folders stay writable.
 */
function pinnedFolders(plan: SandboxPlan, protectedPaths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const path of protectedPaths) {
    const root = rootOf(path, plan);
    if (root === undefined || root.access !== 'read-write') continue;
    const rest = path.slice(root.path === '/' ? 1 : root.path.length + 1).split('/');
    for (let i = 1; i < rest.length; i++) {
      const folder = `${root.path === '/' ? '' : root.path}/${rest.slice(0, i).join('/')}`;
      if (rootOf(folder, plan)?.access === 'read-write') out.add(folder);
    }
  }
  return [...out].sort((a, b) => depthOf(a) - depthOf(b));
}

/** Whether `path` is already out of sight: under a private mount and in no root or exposed folder. */
function coveredByPrivateMount(path: string, plan: SandboxPlan, exposed: readonly string[]): boolean {
  const hidden = [PRIVATE_TMP, PRIVATE_RUN, ...KERNEL_VIEWS].some((m) => isWithin(path, m));
  if (!hidden) return false;
  return !plan.roots.some((r) => isWithin(path, r.path)) && !exposed.some((e) => isWithin(path, e));
}

/**
 * The `bwrap` arguments that run `argv` confined to `plan`. Mount order (later mounts cover
 * earlier ones): the host read-only; private `/dev`, `/proc`, `/tmp`, `/run` (with the host
 * folders holding a root there read-only again); the roots, shallowest first, each read-only or
 * writable by its access; the folders on the way to protected paths pinned (`pinnedFolders`);
 * never-writable paths read-only again; sensitive paths replaced by an empty read-only directory or an empty file. Without
 * `plan.network` the command gets a network namespace with only a loopback interface.
 */
export function bwrapArgs(plan: SandboxPlan, argv: readonly string[]): string[] {
  const args: string[] = [...PROCESS_FLAGS];
  if (!plan.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', PRIVATE_TMP);
  args.push('--tmpfs', PRIVATE_RUN);
  // With the network, name resolution may go through systemd-resolved's files under /run.
  if (plan.network) args.push('--ro-bind-try', '/run/systemd/resolve', '/run/systemd/resolve');
  args.push('--remount-ro', PRIVATE_RUN);
  const exposed = exposedPrivateFolders(plan);
  for (const folder of exposed) args.push('--ro-bind', folder, folder);
  // Shallowest first; at equal depth `read` last, so the stricter access of one path wins.
  const rank = (access: string): number => (access === 'read' ? 1 : 0);
  const roots = [...plan.roots].sort(
    (a, b) => depthOf(a.path) - depthOf(b.path) || rank(a.access) - rank(b.access),
  );
  for (const root of roots) {
    args.push(root.access === 'read-write' ? '--bind' : '--ro-bind', root.path, root.path);
  }
  const readOnly = plan.readOnly.filter((p) =>
    plan.roots.some((r) => r.access === 'read-write' && isWithin(p, r.path)),
  );
  const hidden = plan.hidden.filter((h) => !coveredByPrivateMount(h.path, plan, exposed));
  for (const folder of pinnedFolders(plan, [...readOnly, ...hidden.map((h) => h.path)])) {
    args.push('--bind', folder, folder);
  }
  for (const path of readOnly) args.push('--ro-bind', path, path);
  for (const h of hidden) {
    if (h.kind === 'dir') args.push('--tmpfs', h.path, '--remount-ro', h.path);
    else args.push('--ro-bind', '/dev/null', h.path);
  }
  args.push('--chdir', plan.cwd, '--', ...argv);
  return args;
}

/**
 * The fds a confined stdio server's pipes reach bwrap on (its stdin and stdout are /dev/null).
 * bwrap's own processes (the monitor outside, pid 1 inside) keep their fds 0–2 for their whole
 * life but close every other inherited fd; were the pipes on bwrap's 0 and 1, a server that
 * closes its stdin or stdout while it lives on would break no pipe, and the runtime would learn
 * of it only by a timeout. Handed on fds 4 and 5, the server alone holds them.
 */
export const HANDED_STDIN_FD = 4;
export const HANDED_STDOUT_FD = 5;

/** Run inside the sandbox: puts the handed pipes on the program's fds 0 and 1, then `exec`s it. */
const TAKE_HANDED_STDIO = `exec "$@" 0<&${HANDED_STDIN_FD} 1>&${HANDED_STDOUT_FD} ${HANDED_STDIN_FD}<&- ${HANDED_STDOUT_FD}<&-`;

/**
 * `bwrapArgs` for a stdio server whose pipes are handed to bwrap on `HANDED_STDIN_FD` and
 * `HANDED_STDOUT_FD`: inside the sandbox `/bin/sh` moves them to fds 0 and 1 and `exec`s `argv`
 * (same pid, nothing left between). The host's `/bin/sh` is visible there (the host is bound
 * read-only).
 */
export function bwrapStdioArgs(plan: SandboxPlan, argv: readonly string[]): string[] {
  return bwrapArgs(plan, ['/bin/sh', '-c', TAKE_HANDED_STDIO, 'snotra-stdio', ...argv]);
}
