import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { SessionBusyError, SessionNameError, SessionNotFoundError } from '../../runtime/index.ts';
import { readJsonBody } from './body.ts';
import { SidecarError } from './errors.ts';
import { parse, reply, type RouteContext } from './route-context.ts';

/** `POST /v1/sessions`: the agent the conversation is with, and optionally its name. */
export const SessionBody = z.strictObject({
  agent: z.string().min(1).max(200),
  name: z.string().min(1).max(200).optional(),
});

/**
 * `PATCH /v1/sessions/:id`: a new title, on one line after its whitespace is collapsed, 1 to 200
 * characters, no control characters.
 */
export const SessionPatchBody = z.strictObject({
  title: z
    .string()
    .max(200)
    .refine((t) => t.trim() !== '', 'must not be empty')
    // eslint-disable-next-line no-control-regex
    .refine((t) => !/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(t), 'must not hold control characters'),
});

/** A session error as the sidecar answers it (409 `session_busy`); anything else unchanged. */
export function sessionBusy(err: unknown): unknown {
  if (err instanceof SessionBusyError) return new SidecarError(409, err.code, err.message);
  if (err instanceof SessionNameError) return new SidecarError(400, err.code, err.message);
  return err;
}

/** `GET /v1/sessions`: every session, most recently used first (no transcript). */
export function listSessions(ctx: RouteContext, _req: IncomingMessage, res: ServerResponse): void {
  reply(ctx, res, 200, { sessions: ctx.runtime.sessions.list() });
}

/** `POST /v1/sessions`: a new, empty conversation with an agent (201), named or not. */
export async function createSession(ctx: RouteContext, req: IncomingMessage, res: ServerResponse) {
  const body = parse(SessionBody, await readJsonBody(req, ctx.bodyBytes));
  if (!ctx.runtime.read.hasAgent(body.agent))
    throw new SidecarError(
      404,
      'unknown_agent',
      `agent: no agent ${JSON.stringify(body.agent)} in the config`,
    );
  try {
    const session = ctx.runtime.sessions.create(body.agent, 'sidecar', body.name);
    reply(ctx, res, 201, { session });
  } catch (err) {
    if (err instanceof SessionNameError) {
      const taken = ctx.runtime.sessions.get(body.name ?? '') !== null;
      throw new SidecarError(taken ? 409 : 400, taken ? 'session_exists' : err.code, `name: ${err.message}`);
    }
    throw err;
  }
}

/** `GET /v1/sessions/:id/messages`: a session and its transcript as the model saw it (redacted). */
export function sessionMessages(
  ctx: RouteContext,
  _req: IncomingMessage,
  res: ServerResponse,
  [id]: string[],
) {
  try {
    const messages = ctx.runtime.sessions.messages(id as string);
    reply(ctx, res, 200, { session: ctx.runtime.sessions.get(id as string), messages });
  } catch (err) {
    if (err instanceof SessionNotFoundError) throw new SidecarError(404, err.code, 'no such session');
    throw err;
  }
}

/** `PATCH /v1/sessions/:id`: renames a session (200 with the session; 404 `session_not_found`). */
export async function patchSession(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  [id]: string[],
) {
  const body = parse(SessionPatchBody, await readJsonBody(req, ctx.bodyBytes));
  try {
    reply(ctx, res, 200, { session: ctx.runtime.sessions.rename(id as string, body.title) });
  } catch (err) {
    if (err instanceof SessionNotFoundError) throw new SidecarError(404, err.code, 'no such session');
    throw err;
  }
}
