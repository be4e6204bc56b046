import type { CommandAnalyzer } from '../../policy/seams.ts';
import type { SnotraPathGuard } from '../../policy/paths/index.ts';
import { createShellAnalyzer } from '../../policy/shell/index.ts';
import { withSimpleCommands } from '../../policy/shell/simple-commands.ts';
import type { LoadedConfig } from '../config/load.ts';
import { assertCommandExamples } from '../config/rule-examples.ts';
import {
  createBubblewrapSandbox,
  detectSandbox,
  hostRulesOf,
  type Sandbox,
  type SandboxStatus,
} from '../sandbox/index.ts';
import { createPolicyPaths } from '../config/adapters/policy-paths.ts';

/** The I/O-backed parts of the policy for one config: the path guard, the shell analyzer, the OS sandbox. */
export interface PolicyEnvironment {
  readonly paths: SnotraPathGuard;
  readonly shell: CommandAnalyzer;
  /** Which OS sandbox confines shell and git children (`none`, with the reason, when there is none). */
  readonly sandbox: SandboxStatus;
  /** The sandbox backend the process supervisor uses, built from the same guard; null without one. */
  readonly sandboxBackend: Sandbox | null;
}

/** Options of `createPolicyEnvironment`. */
export interface PolicyEnvironmentOptions {
  /** Finds the OS sandbox; defaults to `detectSandbox()` (tests inject "none"). */
  readonly detectSandbox?: () => SandboxStatus;
  /** False: `command` rules' examples are not checked (`snotra policy test` reports them itself). */
  readonly examples?: boolean;
}

/**
 * Builds the path guard (with the runtime's own state dir and config file as sensitive paths,
 * plus the config's extra entries), loads the shell parser once and finds the OS sandbox, whose
 * mounts hide and protect exactly what the guard refuses.
 */
export async function createPolicyEnvironment(
  loaded: LoadedConfig,
  options: PolicyEnvironmentOptions = {},
): Promise<PolicyEnvironment> {
  // The parser loads first: its wasm compiles on V8's background threads while the path guard is
  // built and the sandbox probe runs (a child process this thread waits for), not after them.
  // The analyzer also lists simple commands, for rules that name a command (`git push`).
  const shell = createShellAnalyzer().then((analyzer) => withSimpleCommands(analyzer));
  try {
    const paths = createPolicyPaths(loaded);
    const sandbox = (options.detectSandbox ?? detectSandbox)();
    const sandboxBackend =
      sandbox.name === 'bubblewrap'
        ? createBubblewrapSandbox({ bwrap: sandbox.program, rules: hostRulesOf(paths) })
        : null;
    const analyzer = await shell;
    // Policy tests of `command` rules need the shell grammar: a rule that does not behave as its
    // examples say refuses to load here, before anything runs under it.
    if (options.examples !== false)
      assertCommandExamples(loaded.config, loaded.file, analyzer.commands?.bind(analyzer));
    return { paths, shell: analyzer, sandbox, sandboxBackend };
  } catch (err) {
    shell.catch(() => {}); // The error above is the one to report.
    throw err;
  }
}
