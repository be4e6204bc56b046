/**
 * One MCP server: its process (started through the injected spawner — the process supervisor, in
 * the OS sandbox), the SDK client over its pipes, its tool catalog, crash detection and restart
 * with backoff.
 */
import { Client } from '@modelcontextprotocol/client';
import { resolveConfiguredEnv } from '../tools/env-config.ts';
import type { Confinement } from '../tools/process-runner.ts';
import type { SecretResolver } from '../tools/types.ts';
import { readCatalog } from './catalog.ts';
import { McpErrorCode } from './codes.ts';
import type { McpLimits } from './limits.ts';
import { CallGate } from './call-gate.ts';
import { PipeTransport, type RequestFate } from './transport.ts';

/** How long a stopped server has to exit on its own once its stdin is closed, before it is ended. */
export const STOP_EXIT_WAIT_MS = 1000;

/** How long a server whose connection closed has to exit on its own (its exit then says why). */
export const CLOSED_EXIT_GRACE_MS = 2000;
import type {
  ListedTool,
  McpChild,
  McpServerSpec,
  McpServerState,
  McpServerStatus,
  McpSpawner,
  TextRedactor,
} from './types.ts';

/** What a connection needs from its host. */
export interface ConnectionDeps {
  readonly spawn: McpSpawner;
  readonly secrets: SecretResolver;
  readonly redactor: TextRedactor;
  readonly limits: McpLimits;
  /** Where the server runs: its sandbox's roots and working directory. */
  readonly placement: () => { readonly confine: Omit<Confinement, 'network'>; readonly cwd: string };
  /** Called with the new catalog (null: the server's tools leave the catalog). */
  readonly onCatalog: (tools: readonly ListedTool[] | null) => void;
  /** Hears status changes (for logs). */
  readonly onStatus: (status: McpServerStatus) => void;
}

/** A failure with a code, for status and tool errors. */
export class McpFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'McpFailure';
  }
}

/** Keeps the last `max` bytes of a stream. */
class Tail {
  #buf = Buffer.alloc(0);
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    const next = Buffer.concat([this.#buf, chunk]);
    this.#buf = next.length > this.max ? next.subarray(next.length - this.max) : next;
  }
  text(): string {
    return this.#buf.toString('utf8').trim();
  }
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/**
 * Guarantees: at most one process per server at a time; the catalog holds only tools of the
 * current process's latest listing (a `list_changed` during the first listing reads it again once
 * ready) and is emptied (`onCatalog(null)`) before anything else when
 * the process exits or the connection closes; after an unexpected exit the server is restarted
 * after a backoff that doubles up to `restartMaxMs` (reset once it stayed up that long); every
 * error text shown (stderr excerpts included) is redacted; `stop()` ends the process tree and
 * cancels any pending restart.
 */
export class McpConnection {
  #state: McpServerState = 'stopped';
  #client: Client | null = null;
  #transport: PipeTransport | null = null;
  /** Calls in flight on this server, and those waiting for a slot (never sent yet). */
  readonly gate: CallGate;
  #child: McpChild | null = null;
  #generation = 0;
  #restarts = 0;
  #attempt = 0;
  #lastError: { code: string; message: string } | null = null;
  #problems: readonly string[] = [];
  #tools = new Map<string, ListedTool>();
  #restartTimer: NodeJS.Timeout | null = null;
  #stopped = false;
  #readyAt = 0;
  #protocol: string | null = null;
  #serverName: string | null = null;
  #ready: Promise<void> | null = null;
  #refreshing: Promise<void> | null = null;
  #refreshAgain = false;
  #closedGeneration = -1;
  /** A `list_changed` came while the first listing was read: that listing may already be stale. */
  #changedWhileStarting = false;

  constructor(
    readonly spec: McpServerSpec,
    private readonly deps: ConnectionDeps,
  ) {
    this.gate = new CallGate(deps.limits.maxConcurrentCalls);
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** The tool `name` of the current listing (filtered-out tools included), or undefined. */
  tool(name: string): ListedTool | undefined {
    return this.#tools.get(name);
  }

  /** Every tool of the current listing. */
  listed(): readonly ListedTool[] {
    return [...this.#tools.values()];
  }

  status(): McpServerStatus {
    return {
      id: this.spec.id,
      state: this.#state,
      pid: this.#child?.pid ?? null,
      protocolVersion: this.#protocol,
      serverName: this.#serverName,
      tools: [...this.#tools.values()].filter((t) => t.filteredOut === null).length,
      restarts: this.#restarts,
      lastError: this.#lastError,
      listingProblems: this.#problems,
    };
  }

  /** Starts the server; resolves once it is ready or its first start failed (then it retries). */
  start(): Promise<void> {
    this.#stopped = false;
    this.#ready ??= this.#launch();
    return this.#ready;
  }

  #setState(state: McpServerState): void {
    this.#state = state;
    this.deps.onStatus(this.status());
  }

  /** The last 1000 characters of a server's output, redacted before the cut (a cut secret would not match). */
  #excerpt(text: string): string {
    return this.deps.redactor.redactString(text).slice(-1000);
  }

  #fail(code: string, message: string): void {
    this.#lastError = { code, message: this.deps.redactor.redactString(message).slice(0, 2000) };
  }

  async #launch(): Promise<void> {
    const generation = ++this.#generation;
    this.#changedWhileStarting = false;
    this.#setState('starting');
    const tail = new Tail(this.deps.limits.stderrTailBytes);
    let child: McpChild;
    try {
      const env = await resolveConfiguredEnv(this.spec.env, this.deps.secrets);
      const place = this.deps.placement();
      child = await this.deps.spawn({
        command: this.spec.command,
        args: this.spec.args,
        cwd: place.cwd,
        env,
        // The server's own files stay readable wherever they are (a script under /tmp included).
        confine: {
          ...place.confine,
          network: this.spec.network,
          programs: [this.spec.command, ...this.spec.args].filter((a) => a.startsWith('/')),
        },
        label: `mcp:${this.spec.id}`,
      });
    } catch (error) {
      this.#fail(
        codeOf(error) ?? McpErrorCode.startFailed,
        `the server could not be started: ${(error as Error).message}`,
      );
      this.#crashed(generation);
      return;
    }
    if (this.#stopped || generation !== this.#generation) {
      await child.terminate();
      return;
    }
    this.#child = child;
    child.stderr.on('data', (c: Buffer) => tail.push(c));
    child.stderr.on('error', () => {});
    const stdin = child.stdin;
    if (stdin === null) {
      this.#fail(McpErrorCode.startFailed, 'the server process has no stdin pipe');
      await child.terminate();
      this.#crashed(generation);
      return;
    }
    const transport = new PipeTransport(
      { stdin, stdout: child.stdout },
      { maxLineBytes: this.deps.limits.maxLineBytes },
    );
    const client = new Client({ name: 'snotra-runtime', version: '0.1.0' }, { capabilities: {} });
    this.#client = client;
    this.#transport = transport;
    let exitedEarly = false;
    // A limit the server broke (a message too large): it is ended, and that is what is reported.
    let violation: string | null = null;
    // The client gave up on a live server (no answer in time) and ended it: that is the reason.
    let endedByClient = false;
    void child.exited.then((exit) => {
      exitedEarly = true;
      if (generation !== this.#generation || this.#stopped) return;
      const how =
        exit.exitCode === null
          ? `was ended by ${exit.signal ?? 'a signal'}`
          : `exited with code ${exit.exitCode}`;
      const stderr = tail.text();
      if (violation !== null) this.#fail(McpErrorCode.invalidResponse, violation);
      else if (endedByClient && exit.signal !== null) {
        // Ended by our signal after it did not answer: the reason already recorded stays.
      } else
        this.#fail(
          this.#state === 'ready' ? McpErrorCode.serverCrashed : McpErrorCode.startFailed,
          `the server process ${how}${stderr ? `; its last output: ${this.#excerpt(stderr)}` : ''}`,
        );
      void client.close().catch(() => {});
      this.#crashed(generation);
    });
    transport.onerror = (error) => {
      const code = codeOf(error);
      // One answer was too large and dropped unread; the request it answered failed, the server goes on.
      if (code === 'mcp_message_discarded') this.#fail(McpErrorCode.invalidResponse, error.message);
      if (code === 'mcp_message_too_large') {
        violation = `${error.message}; the server was ended`;
        // A server that breaks the line limit is restarted, like a crash.
        void child.terminate();
      }
    };
    // The connection closed (the process died, a limit was broken): calls in flight have an unknown outcome.
    // A dying process's pipes close just before its exit is seen; one that lives on without its
    // connection past CLOSED_EXIT_GRACE_MS (it closed its stdin) is ended, so it restarts.
    client.onclose = () => {
      if (generation !== this.#generation) return;
      this.#closedGeneration = generation;
      if (exitedEarly || this.#stopped || violation !== null || this.#state !== 'ready') return;
      const grace = setTimeout(() => {
        if (exitedEarly || generation !== this.#generation || this.#stopped || violation !== null) return;
        this.#fail(McpErrorCode.serverCrashed, 'the server closed its connection (its stdin) and was ended');
        endedByClient = true;
        void child.terminate();
      }, CLOSED_EXIT_GRACE_MS);
      grace.unref();
      void child.exited.then(() => clearTimeout(grace));
    };
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      if (generation !== this.#generation) return;
      if (this.#state === 'ready') void this.#refresh(generation);
      // Not lost while starting: the listing being read may predate the change.
      else if (this.#state === 'starting') this.#changedWhileStarting = true;
    });
    const timeout = this.deps.limits.startTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      this.#protocol = client.getNegotiatedProtocolVersion() ?? null;
      const name = client.getServerVersion()?.name;
      this.#serverName =
        typeof name === 'string' ? this.deps.redactor.redactString(name.slice(0, 128)) : null;
      await this.#list(client, generation);
    } catch (error) {
      if (generation !== this.#generation || this.#stopped) return;
      if (!exitedEarly) {
        this.#fail(
          codeOf(error) === McpErrorCode.invalidResponse
            ? McpErrorCode.invalidResponse
            : McpErrorCode.startFailed,
          `the server did not complete initialize and tools/list: ${(error as Error).message}${tail.text() ? `; its last output: ${this.#excerpt(tail.text())}` : ''}`,
        );
        // A process that exits on its own still reports its exit (and its stderr) instead.
        endedByClient = true;
        await child.terminate();
        this.#crashed(generation);
      }
      return;
    }
    if (generation !== this.#generation || this.#stopped) return;
    this.#readyAt = Date.now();
    this.#setState('ready');
    if (this.#changedWhileStarting) {
      this.#changedWhileStarting = false;
      void this.#refresh(generation);
    }
  }

  async #list(client: Client, generation: number): Promise<void> {
    // One deadline for the whole listing, not one per page: a server that answers each page just
    // in time cannot hold the start (or a refresh) for `maxPages` times the limit.
    const deadline = Date.now() + this.deps.limits.startTimeoutMs;
    // A server without the tools capability has no catalog (it is not asked).
    const listing =
      client.getServerCapabilities()?.tools === undefined
        ? { tools: [], problems: ['the server does not offer tools'] }
        : await readCatalog(
            (cursor) =>
              client.request(
                { method: 'tools/list', params: cursor === undefined ? {} : { cursor } } as never,
                { timeout: Math.max(1, deadline - Date.now()) },
              ),
            this.spec,
            this.deps.limits,
            (text) => this.deps.redactor.redactString(text),
          );
    if (generation !== this.#generation) return;
    // A name is shown to the model and written to the audit: one that carries a secret (or looks
    // like a credential) would carry it out, so the tool is dropped (its name is not repeated).
    const tools = listing.tools.filter((t) => this.deps.redactor.redactString(t.name) === t.name);
    const leaking = listing.tools.length - tools.length;
    const problems = listing.problems.map((p) => this.deps.redactor.redactString(p));
    if (leaking > 0) {
      problems.push(`${leaking} tool(s) dropped: the name contains a secret or looks like a credential`);
    }
    this.#tools = new Map(tools.map((t) => [t.name, t]));
    this.#problems = problems;
    this.deps.onCatalog(tools);
  }

  /** `notifications/tools/list_changed`: list again (one refresh at a time, one more if asked meanwhile). */
  #refresh(generation: number): Promise<void> {
    if (this.#refreshing !== null) {
      this.#refreshAgain = true;
      return this.#refreshing;
    }
    this.#refreshing = (async () => {
      do {
        this.#refreshAgain = false;
        const client = this.#client;
        if (client === null || generation !== this.#generation) break;
        try {
          await this.#list(client, generation);
        } catch (error) {
          this.#fail(
            McpErrorCode.listFailed,
            `tools/list after list_changed failed: ${(error as Error).message}`,
          );
          // An unreadable catalog is no catalog: nothing of the old one stays callable.
          this.#tools = new Map();
          this.deps.onCatalog(null);
        }
      } while (this.#refreshAgain);
      this.#refreshing = null;
      this.deps.onStatus(this.status());
    })();
    return this.#refreshing;
  }

  /** Waits for a running refresh to settle (tests and listings). */
  async settled(): Promise<void> {
    await this.#refreshing;
  }

  #crashed(generation: number): void {
    if (generation !== this.#generation) return;
    this.#generation++;
    this.#tools = new Map();
    this.deps.onCatalog(null);
    this.#client = null;
    this.#transport = null;
    const child = this.#child;
    this.#child = null;
    void child?.terminate();
    if (this.#stopped) return;
    this.#setState('crashed');
    if (this.#readyAt > 0 && Date.now() - this.#readyAt >= this.deps.limits.restartMaxMs) this.#attempt = 0;
    const delay = Math.min(
      this.deps.limits.restartMaxMs,
      this.deps.limits.restartBaseMs * 2 ** this.#attempt,
    );
    this.#attempt++;
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      if (this.#stopped) return;
      this.#restarts++;
      this.#ready = this.#launch();
    }, delay);
    this.#restartTimer.unref();
  }

  /** The client of the ready server, or a failure naming why there is none. */
  client(): { client: Client; generation: number; fate: (key: object) => RequestFate } {
    if (this.#state !== 'ready' || this.#client === null) {
      const why = this.#lastError ? ` (${this.#lastError.code})` : '';
      throw new McpFailure(
        McpErrorCode.serverUnavailable,
        `MCP server "${this.spec.id}" is ${this.#state}${why}: the call was not sent and did not run; it is safe to try again`,
      );
    }
    const transport = this.#transport;
    return {
      client: this.#client,
      generation: this.#generation,
      fate: (key) => transport?.fate(key) ?? 'unsent',
    };
  }

  /** Whether `generation` is still the live process (a call can tell a crash from an error). */
  isCurrent(generation: number): boolean {
    return (
      generation === this.#generation && this.#state === 'ready' && this.#closedGeneration !== generation
    );
  }

  /** Ends the process tree and any pending restart; the server's tools leave the catalog. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#generation++;
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    this.#restartTimer = null;
    this.#tools = new Map();
    this.deps.onCatalog(null);
    const client = this.#client;
    const child = this.#child;
    this.#client = null;
    this.#transport = null;
    this.#child = null;
    // The stdio shutdown of the MCP spec: stdin closed first, a moment for the server to read
    // what it was sent (a cancellation of a call in flight) and exit on its own, then the
    // process tree is ended (SIGTERM, then SIGKILL after the supervisor's grace).
    await client?.close().catch(() => {});
    if (child !== null) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        child.exited,
        new Promise((resolve) => (timer = setTimeout(resolve, STOP_EXIT_WAIT_MS))),
      ]);
      clearTimeout(timer);
      await child.terminate();
    }
    this.#ready = null;
    this.#setState('stopped');
  }
}
