/**
 * The contract matrix's view of an execution surface: how to launch the real runtime through
 * that surface's entry with a scenario's config, and how to deliver a case's message through it.
 * Everything else a case does (deciding approvals as the human, reading the store, counting side
 * effects) is the same for every surface and lives outside the driver.
 *
 * A surface's driver (`drivers/<surface>.ts`) makes `trigger` go through that surface's real
 * entry (the sidecar's chat route, the scheduler, the goal machine, a fake Bot API server on
 * 127.0.0.1 delivering the message, `spawn_agent`, an MCP client); where a case applies
 * differently, the case's `note` and the README say so.
 */

/** The six execution surfaces of the seed (§13). */
export const SURFACES = ['chat', 'scheduled', 'goal', 'platform', 'subagent', 'mcp'] as const;
export type SurfaceName = (typeof SURFACES)[number];

/** A scripted model step (actors/model/scripted.ts), as JSON in the agent's script file. */
export type ScriptStep = Record<string, unknown>;

/** The model of one case agent: a script, or an OpenAI-compatible server (the fake one of the workspace). */
export type CaseModel =
  | { readonly kind: 'scripted'; readonly steps: readonly ScriptStep[] }
  | { readonly kind: 'openai-compatible'; readonly baseUrl: string; readonly apiKeySecret: string };

/** One agent a case needs configured, and the message its surface delivers to it. */
export interface CaseAgent {
  /** Agent id (unique in its scenario; letters, digits, `-`). */
  readonly id: string;
  readonly mode: 'allow' | 'ask' | 'deny';
  readonly tools?: readonly string[];
  readonly model: CaseModel;
  /**
   * The message delivered through the surface (a chat message, a task's message, a sub-agent's
   * task, an MCP `run_task` text). Null for an agent only ever started by another agent.
   */
  readonly text: string | null;
  /**
   * Sub-agent surface only: how the surface's parent delegates to this agent — the parent's own
   * mode and tools (default `allow`, every tool), what its `spawn_agent` call asks for besides
   * profile and task, and the profiles it spawns (one after another) before this one.
   */
  readonly delegation?: {
    readonly parentMode?: 'allow' | 'ask' | 'deny';
    readonly parentTools?: readonly string[];
    readonly request?: Readonly<Record<string, unknown>>;
    readonly before?: readonly string[];
  };
}

/** The config a group of cases runs on: its agents plus config shared by them. */
export interface Scenario {
  readonly name: string;
  readonly agents: readonly CaseAgent[];
  /** Merged over the generated config (tools metadata, http allowlist, secrets backend). */
  readonly config: Readonly<Record<string, unknown>>;
  /** Extra environment of the runtime process (`SNOTRA_SECRET_*` for an `env` secrets backend). */
  readonly env: Readonly<Record<string, string>>;
}

/** The files a scenario's runtime works on (created by the matrix, not by the driver). */
export interface ScenarioFolder {
  /** The folder of the config (`project/` read-write primary, `docs/` read-only, `outside/` no root). */
  readonly dir: string;
  readonly project: string;
  readonly docs: string;
  readonly outside: string;
  readonly stateDir: string;
}

/** A runtime launched through a surface's entry. */
export interface SurfaceRuntime {
  /** The runtime's process (its tree is what test 12 checks). */
  pid(): number;
  /** The sidecar of that runtime (the human's HTTP surface); changes port on restart. */
  sidecar(): { readonly port: number; readonly token: string };
  /** Delivers the agent's message through the surface; resolves with the id of the run that executes the agent's script. */
  trigger(agentId: string): Promise<string>;
  /** Closes the runtime the way its launcher does and starts it again on the same state dir and config. */
  restart(): Promise<void>;
  /** Closes it the way its launcher does (SIGTERM to `snotra start`; closing the MCP client for `snotra mcp`); resolves once the process is gone. */
  close(): Promise<void>;
  /** What the process wrote on stderr (its logs). */
  logs(): string;
  /**
   * Where a surface takes input from remote senders (platform): `text` from a sender the local
   * user never paired, to the agent's entry; resolves with what that sender got back.
   */
  fromStranger?(agentId: string, text: string): Promise<readonly string[]>;
  /** Secrets the surface itself configured (a bot token), which must appear nowhere either (test 11). */
  secrets?(): readonly string[];
  /**
   * Called by a case once a run it triggered has completed: waits for and asserts what the
   * surface itself does at a run's end (the goal's iteration accounted and the goal stopped; the
   * answer delivered to the chat exactly once). Absent where the run's end is all there is.
   */
  settled?(
    runId: string,
    outcome: { readonly status: string; readonly reason: string; readonly text?: string },
  ): Promise<void>;
}

/** How a surface launches its runtime. */
export interface SurfaceDriver {
  readonly surface: SurfaceName;
  /** Whether the surface's runs have a human at hand (waiting approvals stay live) or park (unattended). */
  readonly interaction: 'attended' | 'unattended';
  /** One line for the README: the entry a case goes through. */
  readonly entry: string;
  /** Writes the scenario's config into `folder` (plus what this surface needs) and launches the runtime. */
  start(scenario: Scenario, folder: ScenarioFolder): Promise<SurfaceRuntime>;
}
