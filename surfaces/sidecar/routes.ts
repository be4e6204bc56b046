import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  BadCursorError,
  ClusterDecisionError,
  GrantNotEligibleError,
  graphOf,
  MAX_UNDELIVERED_PAGE,
} from '../../runtime/index.ts';
import { readJsonBody } from './body.ts';
import { SidecarError } from './errors.ts';
import { parse, reply, type Handler, type RouteContext } from './route-context.ts';
import { machineSvg } from './machine-svg.ts';
import { rewindRun, runCheckpoints } from './rewind-routes.ts';
import { createSession, listSessions, patchSession, sessionBusy, sessionMessages } from './session-routes.ts';

export type { RouteContext } from './route-context.ts';

export const DecisionBody = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  scope: z.enum(['once', 'session', 'always']).optional(),
  reason: z.string().max(2000).optional(),
});

export const ChatBody = z.strictObject({
  text: z.string().min(1).max(100_000),
  sessionId: z.string().min(1).max(200).optional(),
});

/** A path segment of the raw path, percent-decoded; a malformed escape is a 400. */
function segment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new SidecarError(400, 'bad_path', 'the path has a malformed percent escape');
  }
}

/** The routes, matched on the raw path split at `/` (no normalization: `//v1/inbox` matches nothing). */
const ROUTES: readonly { method: string; pattern: readonly (string | null)[]; handler: Handler }[] = [
  { method: 'GET', pattern: ['v1', 'agents'], handler: agents },
  { method: 'GET', pattern: ['v1', 'inbox'], handler: inbox },
  { method: 'GET', pattern: ['v1', 'inbox', null], handler: inboxItem },
  { method: 'POST', pattern: ['v1', 'inbox', null, 'decision'], handler: decision },
  { method: 'POST', pattern: ['v1', 'chat', null, 'messages'], handler: chat },
  { method: 'GET', pattern: ['v1', 'sessions'], handler: listSessions },
  { method: 'POST', pattern: ['v1', 'sessions'], handler: createSession },
  { method: 'PATCH', pattern: ['v1', 'sessions', null], handler: patchSession },
  { method: 'GET', pattern: ['v1', 'sessions', null, 'messages'], handler: sessionMessages },
  { method: 'GET', pattern: ['v1', 'runs'], handler: runs },
  { method: 'GET', pattern: ['v1', 'runs', null], handler: run },
  { method: 'GET', pattern: ['v1', 'runs', null, 'audit'], handler: audit },
  { method: 'GET', pattern: ['v1', 'runs', null, 'calls', null, 'provenance'], handler: provenance },
  { method: 'GET', pattern: ['v1', 'runs', null, 'conversation'], handler: conversation },
  { method: 'GET', pattern: ['v1', 'runs', null, 'checkpoints'], handler: runCheckpoints },
  { method: 'POST', pattern: ['v1', 'runs', null, 'rewind'], handler: rewindRun },
  { method: 'GET', pattern: ['v1', 'machines', null], handler: machine },
  { method: 'GET', pattern: ['v1', 'machines', null, 'svg'], handler: machineSvg },
  { method: 'GET', pattern: ['v1', 'actors'], handler: actors },
  { method: 'GET', pattern: ['v1', 'goals'], handler: goals },
  { method: 'POST', pattern: ['v1', 'goals', null, null], handler: goalControl },
  { method: 'GET', pattern: ['v1', 'platforms', 'undelivered'], handler: undelivered },
];

/** The body of a goal control: an empty JSON object (JSON, so a browser must pass CORS first). */
export const GoalControlBody = z.strictObject({});

const GOAL_ACTIONS = ['start', 'pause', 'resume', 'cancel'] as const;

/** Finds the route of a raw path (query already cut off); null for none. Params are decoded. */
export function matchRoute(
  method: string,
  rawPath: string,
): { handler: Handler; params: string[] } | 'method' | null {
  if (!rawPath.startsWith('/')) return null;
  const parts = rawPath.slice(1).split('/');
  let wrongMethod = false;
  for (const r of ROUTES) {
    if (r.pattern.length !== parts.length) continue;
    const params: string[] = [];
    const ok = r.pattern.every((p, i) => {
      const part = parts[i] as string;
      if (p === null) {
        if (part === '') return false;
        params.push(part);
        return true;
      }
      return p === part;
    });
    if (!ok) continue;
    if (r.method !== method) {
      wrongMethod = true;
      continue;
    }
    return { handler: r.handler, params: params.map(segment) };
  }
  return wrongMethod ? 'method' : null;
}

/** The configured agents a chat can address: id and mode only. */
function agents(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse): void {
  reply(ctx, res, 200, { agents: ctx.runtime.read.agents() });
}

function inbox(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse): void {
  reply(ctx, res, 200, { approvals: ctx.runtime.read.pendingApprovals() });
}

/**
 * One approval with what `approval.requested` shows live: the policy's targets and rule, the
 * scopes offered, and the preview (the exact command, or the diff against the file as it is
 * now). `details` is null when the run's context is gone (the record alone is still shown).
 */
function inboxItem(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse, [id]: string[]): void {
  const view = ctx.runtime.read.approval(id as string);
  if (view === null) throw new SidecarError(404, 'not_found', 'no such approval');
  reply(ctx, res, 200, view);
}

async function decision(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, [id]: string[]) {
  const body = parse(DecisionBody, await readJsonBody(req, ctx.bodyBytes));
  const approvalId = id as string;
  const scope = body.scope ?? 'once';
  if (body.decision === 'deny' && scope !== 'once') {
    throw new SidecarError(400, 'invalid_body', 'scope: a denial is always once');
  }
  let result;
  try {
    result =
      body.decision === 'deny'
        ? await ctx.runtime.approvals.decideAsync(approvalId, 'denied', ctx.user, body.reason)
        : scope === 'once'
          ? await ctx.runtime.approvals.decideAsync(approvalId, 'approved', ctx.user, body.reason)
          : ctx.runtime.approvals.approveWithGrant(
              approvalId,
              scope === 'session' ? 'session' : 'standing',
              ctx.user,
            );
  } catch (err) {
    if (err instanceof GrantNotEligibleError) throw new SidecarError(400, err.code, err.message);
    if (err instanceof ClusterDecisionError) throw new SidecarError(409, err.code, err.message);
    throw err;
  }
  if (result.ok) {
    reply(ctx, res, 200, { approval: result.approval });
    return;
  }
  const status = result.reason === 'not_found' ? 404 : 409;
  throw new SidecarError(status, result.reason, result.message);
}

async function chat(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, [agent]: string[]) {
  const body = parse(ChatBody, await readJsonBody(req, ctx.bodyBytes));
  const agentId = agent as string;
  if (!ctx.runtime.read.hasAgent(agentId)) {
    throw new SidecarError(404, 'unknown_agent', `no agent ${JSON.stringify(agentId)} in the config`);
  }
  const runId = await ctx.runtime.runs
    .submit(agentId, body.text, {
      ...(body.sessionId === undefined ? {} : { sessionId: body.sessionId }),
      surface: 'sidecar',
      interaction: 'attended',
    })
    .catch((err: unknown) => {
      throw sessionBusy(err);
    });
  reply(ctx, res, 202, { runId });
}

function runs(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse): void {
  reply(ctx, res, 200, { runs: ctx.runtime.read.runs() });
}

function run(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse, [id]: string[]): void {
  const view = ctx.runtime.read.run(id as string);
  if (view === null) throw new SidecarError(404, 'unknown_run', 'no such run');
  reply(ctx, res, 200, { run: view.run, outcome: view.outcome, state: dottedState(view.state) });
}

/** A machine's state value as a dotted path (`running.acting.executing`); null for none or a parallel state. */
export function dottedState(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return null;
  const entries = Object.entries(value);
  if (entries.length !== 1) return null;
  const [key, child] = entries[0] as [string, unknown];
  const rest = dottedState(child);
  return rest === null ? null : `${key}.${rest}`;
}

/** `GET /v1/runs/:id/conversation`: the run's turns with calls, decisions, approvals, results and sub-agents in place. */
function conversation(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse, [id]: string[]): void {
  const view = ctx.runtime.read.conversation(id as string);
  if (view === null) throw new SidecarError(404, 'unknown_run', 'no such run');
  reply(ctx, res, 200, view);
}

function audit(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse, [id]: string[]): void {
  const view = ctx.runtime.read.runAudit(id as string);
  if (view === null) throw new SidecarError(404, 'unknown_run', 'no such run');
  reply(ctx, res, 200, view);
}

/**
 * `GET /v1/runs/:runId/calls/:callId/provenance`: the call's chain (as `snotra audit why --json`);
 * 200 with `closed: false` and the problems when it does not close, 404 `unknown_call` when the
 * log has no event of that call.
 */
function provenance(
  ctx: RouteContext,
  _req: IncomingMessage,
  res: ServerResponse,
  [run, call]: string[],
): void {
  const view = ctx.runtime.read.provenance(run as string, call as string);
  if (view === null) throw new SidecarError(404, 'unknown_call', 'no such call in the audit log');
  reply(ctx, res, 200, view);
}

function machine(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse, [name]: string[]): void {
  const graph = graphOf(name as string);
  if (graph === null) throw new SidecarError(404, 'unknown_machine', 'no machine by that name');
  reply(ctx, res, 200, graph);
}

function actors(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse): void {
  reply(ctx, res, 200, ctx.runtime.node.inspect.actors());
}

/**
 * `GET /v1/platforms/undelivered?limit=N&after=CURSOR`: reply parts not delivered (failed,
 * unknown, still to send), newest first, a page of `limit` (1 to 1000, default 100) with the
 * cursor of the next (`next`, null on the last page). A bad or repeated `limit` is 400 `bad_query`,
 * an `after` this list did not make 400 `bad_cursor`.
 */
function undelivered(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): void {
  const query = new URL(req.url ?? '/', 'http://sidecar').searchParams;
  // A parameter given twice is ambiguous (which one a proxy or log read): refused, not guessed.
  for (const name of ['limit', 'after'])
    if (query.getAll(name).length > 1)
      throw new SidecarError(400, 'bad_query', `${name}: given more than once`);
  const limitText = query.get('limit') ?? '100';
  const limit = Number(limitText);
  if (!/^\d{1,4}$/.test(limitText) || limit < 1 || limit > MAX_UNDELIVERED_PAGE)
    throw new SidecarError(400, 'bad_query', `limit: expected 1 to ${MAX_UNDELIVERED_PAGE}`);
  let page;
  try {
    page = ctx.runtime.read.undeliveredReplies({
      cursor: query.get('after') ?? undefined,
      limit,
    });
  } catch (err) {
    if (err instanceof BadCursorError)
      throw new SidecarError(400, err.code, 'after: not a cursor of this list');
    throw err;
  }
  reply(ctx, res, 200, { undelivered: page.parts, next: page.next });
}

function goals(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse): void {
  reply(ctx, res, 200, { goals: ctx.runtime.goals.list() });
}

/** `POST /v1/goals/:id/{start,pause,resume,cancel}`: a human's control, applied at once. */
async function goalControl(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  [id, action]: string[],
) {
  parse(GoalControlBody, await readJsonBody(req, ctx.bodyBytes));
  const goalId = id as string;
  if (!(GOAL_ACTIONS as readonly string[]).includes(action as string))
    throw new SidecarError(404, 'unknown_action', 'goal actions are start, pause, resume and cancel');
  if (!ctx.runtime.read.hasGoal(goalId))
    throw new SidecarError(404, 'unknown_goal', `no goal ${JSON.stringify(goalId)} in surfaces.goalLoops`);
  const control = ctx.runtime.goals.control(goalId, action as (typeof GOAL_ACTIONS)[number], ctx.user);
  if (control.result !== 'ok')
    throw new SidecarError(409, 'goal_unchanged', `${action} changed nothing (${control.result})`);
  reply(ctx, res, 200, { goal: ctx.runtime.read.goal(goalId), control });
}
