import { z } from 'zod';

/**
 * The join socket's file name inside the state dir. `snotra start` listens on it (mode 0600 in
 * the 0700 state dir: only the local user who runs the runtime can connect); `snotra run`,
 * `snotra open` and the surfaces built on them join the running runtime through it.
 */
export const JOIN_SOCKET = 'join.sock';

/** The longest request line (a message is at most 100,000 characters; JSON escapes grow it). */
export const MAX_REQUEST_LINE = 1024 * 1024;

const Req = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const Id = z.string().min(1).max(512);

/**
 * One request line from a joining surface. Each carries `req`, echoed by its reply. The server
 * decides who the user is (the local user it runs as), never the client.
 */
export const JoinRequest = z.discriminatedUnion('type', [
  /** Who is there: the runtime's pid, state dir and agents. */
  z.strictObject({ v: z.literal(1), type: z.literal('hello'), req: Req }),
  /** From now on, every run feed event of the runtime (redacted) on this connection. */
  z.strictObject({ v: z.literal(1), type: z.literal('follow'), req: Req }),
  /** Starts a run; `continue` takes the workspace's latest session. */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('submit'),
    req: Req,
    agent: Id,
    text: z.string().min(1).max(100_000),
    session: Id.optional(),
    continue: z.boolean().optional(),
    unattended: z.boolean(),
  }),
  /** Replies when the run ends, with its outcome. */
  z.strictObject({ v: z.literal(1), type: z.literal('wait'), req: Req, runId: Id }),
  /** Decides an approval as the local user. */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('decide'),
    req: Req,
    approvalId: Id,
    decision: z.enum(['approved', 'denied']),
    reason: z.string().max(2000).optional(),
  }),
  /** Approves and grants a session or standing approval (where eligible). */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('grant'),
    req: Req,
    approvalId: Id,
    scope: z.enum(['session', 'standing']),
  }),
  /**
   * Rewinds the roots to a checkpoint as the local user (`dryRun`: the diff only), through the
   * running runtime, so the rewind is locked against its live runs (`snotra rewind`).
   */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('rewind'),
    req: Req,
    checkpoint: Id,
    dryRun: z.boolean(),
    /** The surface the audit names (`snotra rewind`: cli, the default; `/rewind`: chat). */
    surface: z.enum(['cli', 'chat']).optional(),
  }),
  /** A single-use login URL of the web app (`snotra open`). */
  z.strictObject({ v: z.literal(1), type: z.literal('login'), req: Req }),
  // What `snotra chat` asks of the runtime it joined (surfaces/join/chat-server.ts).
  /** A chat message, attended, in `session` (a new session when absent); replies `runId`, `session`. */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('chat-submit'),
    req: Req,
    agent: Id,
    text: z.string().min(1).max(100_000),
    session: Id.optional(),
  }),
  /** Interrupts (saved, resumable), resumes or cancels a run; replies `done` (false: nothing to do). */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('run-control'),
    req: Req,
    runId: Id,
    action: z.enum(['interrupt', 'resume', 'cancel']),
    reason: z.string().max(2000).optional(),
  }),
  /** The sessions, most recently used first (`list`), or the workspace's latest (`latest`). */
  z.strictObject({ v: z.literal(1), type: z.literal('sessions'), req: Req, op: z.enum(['list', 'latest']) }),
  /** One session (`get`), a new one for an agent (`create`, `name` optional), or its compaction (`compact`). */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('session'),
    req: Req,
    op: z.enum(['get', 'create', 'compact']),
    session: Id.optional(),
    agent: Id.optional(),
  }),
  /** The agents with their modes now. */
  z.strictObject({ v: z.literal(1), type: z.literal('agents'), req: Req }),
  /** Changes an agent's mode while the runtime runs, as the local user (audited). */
  z.strictObject({
    v: z.literal(1),
    type: z.literal('set-mode'),
    req: Req,
    agent: Id,
    mode: z.enum(['allow', 'ask', 'deny']),
  }),
  /** The pending approvals of the Inbox. */
  z.strictObject({ v: z.literal(1), type: z.literal('inbox'), req: Req }),
  /**
   * The workspace roots of the running runtime as they are now (after any change while it runs),
   * and, with `agent`, that agent's mode now: what `/roots` shows (not the chat's own config).
   * Read-only: no field changes anything.
   */
  z.strictObject({ v: z.literal(1), type: z.literal('roots'), req: Req, agent: Id.optional() }),
  /** A session's checkpoints, oldest first. */
  z.strictObject({ v: z.literal(1), type: z.literal('checkpoints'), req: Req, session: Id }),
]);
export type JoinRequest = z.infer<typeof JoinRequest>;

/** A distributive `Omit` over the request union (what a client passes before `v` and `req` are added). */
export type RequestBody = JoinRequest extends infer R
  ? R extends JoinRequest
    ? Omit<R, 'v' | 'req'>
    : never
  : never;

/** An error of a reply: a stable snake_case code and a sentence. */
export interface JoinErrorBody {
  readonly code: string;
  readonly message: string;
}

/** One line from the server: a reply to request `req`, or a feed event after `follow`. */
export const JoinLine = z.union([
  z.looseObject({
    type: z.literal('reply'),
    req: Req,
    ok: z.literal(true),
  }),
  z.looseObject({
    type: z.literal('reply'),
    req: Req,
    ok: z.literal(false),
    error: z.strictObject({ code: z.string(), message: z.string() }),
  }),
  z.looseObject({ type: z.literal('event'), event: z.looseObject({ type: z.string(), runId: z.string() }) }),
  z.looseObject({ type: z.literal('stopped') }),
  z.looseObject({
    type: z.literal('error'),
    error: z.strictObject({ code: z.string(), message: z.string() }),
  }),
]);
export type JoinLine = z.infer<typeof JoinLine>;

/** The `hello` reply's body. */
export interface HelloReply {
  readonly pid: number;
  readonly stateDir: string;
  readonly agents: readonly string[];
}
