/** A message for a session that another run holds (one run at a time per session). */
export class SessionBusyError extends Error {
  readonly code = 'session_busy';
  constructor(
    readonly sessionId: string,
    readonly runId: string,
    status: string,
  ) {
    super(
      `session ${JSON.stringify(sessionId)} is busy: run ${runId} is still ${status.replaceAll('_', ' ')}; ` +
        (status === 'waiting_for_approval'
          ? 'decide its approval (snotra inbox) or wait for it to end, then send again'
          : 'wait for it to end, then send again'),
    );
  }
}

/** A session that does not exist. */
export class SessionNotFoundError extends Error {
  readonly code = 'session_not_found';
  constructor(readonly sessionId: string) {
    super(`no session ${JSON.stringify(sessionId)}`);
  }
}

/** A session name that cannot be used. */
export class SessionNameError extends Error {
  readonly code = 'invalid_session';
}

/** The longest session name. */
export const SESSION_NAME_MAX = 200;

/** Checks a session name given by a surface (`--session`, the sidecar, MCP); `where` names the input. */
export function checkSessionName(name: string, where: string): string {
  if (name.length === 0 || name.length > SESSION_NAME_MAX)
    throw new SessionNameError(`${where}: a session name is 1 to ${SESSION_NAME_MAX} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name))
    throw new SessionNameError(`${where}: a session name must not contain control characters`);
  return name;
}
