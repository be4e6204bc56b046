/**
 * Test support for tool executors: a real temporary workspace, the real path guard, decisions
 * whose targets come from `guard.resolve`, and execution contexts.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_TOOLS, type BuiltinToolName } from '../../policy/builtins.ts';
import type { Decision, Target } from '../../policy/decision.ts';
import { createPathGuard, type SnotraPathGuard } from '../../policy/paths/index.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type { SecretResolver, ToolExecutionContext } from '../../actors/tools/types.ts';

/** A temp dir holding `root/` (read-write, primary), `outside/` and the runtime's `state/`. */
export interface TestWorkspace {
  readonly dir: string;
  readonly root: string;
  readonly outside: string;
  readonly guard: SnotraPathGuard;
  roots: WorkspaceRoot[];
  /** A decision allowing `tool` with `args`, targets resolved now through the guard. */
  decide(tool: BuiltinToolName, args: Record<string, unknown>): Decision;
  /** An execution context for `decision`. */
  context(decision: Decision, extra?: Partial<ToolExecutionContext>): ToolExecutionContext;
  cleanup(): void;
}

/** A resolver that knows no secret. */
export const noSecrets: SecretResolver = {
  resolve: (name) => Promise.reject(new Error(`no secret ${name}`)),
};

/** Creates a workspace (realpath'd, so no symlink in the temp prefix). */
export function createTestWorkspace(): TestWorkspace {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-tools-')));
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  mkdirSync(join(dir, 'state'));
  const guard = createPathGuard({
    stateDir: join(dir, 'state'),
    configFile: join(dir, 'snotra.config.json'),
  });
  const ws: TestWorkspace = {
    dir,
    root,
    outside,
    guard,
    roots: [{ id: 'root', path: root, access: 'read-write', primary: true, source: 'workspace' }],
    decide(tool, args) {
      const meta = BUILTIN_TOOLS[tool].metadata;
      const access = meta.risk === 'write-local' ? 'write' : 'read';
      const targets: Target[] = [];
      for (const argument of ('pathArguments' in meta ? meta.pathArguments : []) ?? []) {
        const input = args[argument];
        if (typeof input !== 'string') continue;
        if ('pathScope' in meta && meta.pathScope === 'sensitive-only') {
          targets.push({ argument, input, resolved: null, root: null, access: null });
          continue;
        }
        const resolved = guard.resolve(argument, input, access, ws.roots);
        if (!resolved.ok) throw new Error(`test decision refused: ${resolved.reason} ${resolved.message}`);
        targets.push(resolved.target);
      }
      return {
        decision: 'allow',
        reason: 'mode_allow',
        risk: meta.risk,
        rule: { id: 'mode.allow', source: 'mode' },
        targets,
        humanRequired: false,
        step: 9,
      };
    },
    context(decision, extra = {}) {
      return {
        runId: 'run-1',
        callId: 'call-1',
        idempotencyKey: 'idem-1',
        decision,
        roots: ws.roots,
        paths: guard,
        signal: new AbortController().signal,
        secrets: noSecrets,
        ...extra,
      };
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return ws;
}
