/**
 * A real temporary directory tree for the path guard tests: a home with credentials, a project
 * root, a sibling that shares the project's name prefix, and a place outside every root.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { createPathGuard, type PathGuardOptions, type SnotraPathGuard } from '../../policy/paths/index.ts';

export interface TempTree {
  /** The canonical temp dir (realpath, so `/tmp` symlinks on macOS do not matter). */
  readonly dir: string;
  readonly home: string;
  readonly proj: string;
  readonly outside: string;
  readonly stateDir: string;
  readonly configFile: string;
  /** Writes a file (creating parents) relative to `dir`. */
  file(relative: string, content?: string): string;
  /** Creates a directory relative to `dir`. */
  mkdir(relative: string): string;
  /** Creates a symlink at `relative` (to `dir`) pointing at `target` verbatim. */
  link(relative: string, target: string): string;
  cleanup(): void;
}

/** Creates the standard tree under a fresh `mkdtemp` directory. */
export function makeTree(prefix = 'snotra-paths-'): TempTree {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const at = (relative: string): string => path.join(dir, relative);
  const tree: TempTree = {
    dir,
    home: at('home'),
    proj: at('w/proj'),
    outside: at('outside'),
    stateDir: at('w/proj/.snotra'),
    configFile: at('w/proj/snotra.config.json'),
    file(relative, content = 'x') {
      fs.mkdirSync(path.dirname(at(relative)), { recursive: true });
      fs.writeFileSync(at(relative), content);
      return at(relative);
    },
    mkdir(relative) {
      fs.mkdirSync(at(relative), { recursive: true });
      return at(relative);
    },
    link(relative, target) {
      fs.mkdirSync(path.dirname(at(relative)), { recursive: true });
      fs.symlinkSync(target, at(relative));
      return at(relative);
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  tree.file('home/.ssh/id_rsa', 'PRIVATE KEY');
  tree.file('home/.aws/credentials', 'aws');
  tree.file('home/notes.txt', 'notes');
  tree.file('w/proj/src/main.ts', 'main');
  tree.file('w/proj/a/b/c/d/e.txt', 'deep');
  tree.file('w/proj-evil/x.txt', 'evil');
  tree.file('outside/secret.txt', 'outside');
  return tree;
}

/** A root with the schema defaults filled in. */
export function root(
  id: string,
  rootPath: string,
  access: WorkspaceRoot['access'],
  extra: Partial<Pick<WorkspaceRoot, 'primary' | 'deny' | 'source'>> = {},
): WorkspaceRoot {
  return { id, path: rootPath, access, primary: false, source: 'workspace', ...extra };
}

/** The project as the primary read-write root. */
export function projectRoots(tree: TempTree, deny?: string[]): WorkspaceRoot[] {
  return [
    root(
      'project',
      tree.proj,
      'read-write',
      deny === undefined ? { primary: true } : { primary: true, deny },
    ),
  ];
}

/** A guard on the real file system with the tree's home, state dir and config file. */
export function guardFor(tree: TempTree, extra: Partial<PathGuardOptions> = {}): SnotraPathGuard {
  return createPathGuard({ home: tree.home, stateDir: tree.stateDir, configFile: tree.configFile, ...extra });
}
