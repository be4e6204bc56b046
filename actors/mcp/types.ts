/**
 * The seams of the MCP client: how a server process is started (the runtime's process
 * supervisor, in the OS sandbox) and what the client reports. `actors/` never imports `runtime/`.
 */
import type { Readable, Writable } from 'node:stream';
import type { McpAnnotations } from '../../policy/mcp.ts';
import type { ChildEnvEntry, Confinement } from '../tools/process-runner.ts';
import type { ConfiguredEnvValue } from '../tools/env-config.ts';

/** A started server process (a `SupervisedChild` of the process supervisor). */
export interface McpChild {
  readonly pid: number;
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exited: Promise<{ readonly exitCode: number | null; readonly signal: string | null }>;
  /** Ends the whole process tree. */
  terminate(): Promise<void>;
}

/** What to start: a server in its sandbox, with its own configured variables only. */
export interface McpSpawnRequest {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: readonly ChildEnvEntry[];
  readonly confine: Confinement;
  readonly label: string;
}

/** Starts server processes; rejects (with a code) before anything runs when it cannot. */
export type McpSpawner = (request: McpSpawnRequest) => Promise<McpChild>;

/** One configured server, as the client needs it. */
export interface McpServerSpec {
  readonly id: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, ConfiguredEnvValue>>;
  readonly filter: {
    readonly include?: readonly string[] | undefined;
    readonly exclude?: readonly string[] | undefined;
  };
  readonly timeoutMs?: number | undefined;
  readonly network: boolean;
}

/** Scrubs registered secrets (and credential-looking text) from a string. */
export interface TextRedactor {
  redactString(text: string): string;
}

/** A tool as the server listed it, checked and compiled. */
export interface ListedTool {
  readonly name: string;
  readonly annotations: McpAnnotations;
  readonly inputSchema: Record<string, unknown>;
  readonly digest: string;
  readonly check: (args: Record<string, unknown>) => string | null;
  /** Why the user's filter leaves it out (not offered), or null. */
  readonly filteredOut: string | null;
}

/** The status of a server, for listings. */
export type McpServerState = 'starting' | 'ready' | 'crashed' | 'stopped';

/** A server's status (never a secret: stderr excerpts are redacted). */
export interface McpServerStatus {
  readonly id: string;
  readonly state: McpServerState;
  readonly pid: number | null;
  readonly protocolVersion: string | null;
  readonly serverName: string | null;
  readonly tools: number;
  readonly restarts: number;
  /** The last failure: a code and a message (with a redacted stderr excerpt). */
  readonly lastError: { readonly code: string; readonly message: string } | null;
  /** Problems of the last listing (tools dropped, pages cut short). */
  readonly listingProblems: readonly string[];
}
