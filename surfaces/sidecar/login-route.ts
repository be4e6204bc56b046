import type { IncomingMessage, ServerResponse } from 'node:http';
import { SidecarError, BASE_HEADERS } from './errors.ts';
import { LOGIN_PATH, sessionCookie, type LoginCodes } from './login.ts';

/**
 * `GET /login?code=C` (the URL `snotra open` opens): exchanges a single-use login code for a
 * cookie session of this launch and sends the browser to the web app (303 to `/`). A code that
 * is unknown, used or expired is 401 `login_code_invalid`. Only a navigation the user started
 * (`Sec-Fetch-Site` `none` or absent) or a same-origin one may log in. Returns false for any
 * other path.
 */
export function serveLogin(
  req: IncomingMessage,
  res: ServerResponse,
  rawPath: string,
  query: string,
  logins: LoginCodes,
  cors: Record<string, string>,
): boolean {
  if (rawPath !== LOGIN_PATH) return false;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'none' && site !== 'same-origin')
    throw new SidecarError(
      403,
      'bad_login_context',
      'a login URL must be opened directly, not from another site',
    );
  const params = new URLSearchParams(query);
  const codes = params.getAll('code');
  const code = codes.length === 1 ? codes[0] : undefined;
  const session = code === undefined || code.length === 0 ? null : logins.exchange(code);
  if (session === null)
    throw new SidecarError(
      401,
      'login_code_invalid',
      'this login code is unknown, already used or expired (codes live 60 s and work once): run `snotra open` again',
    );
  res.writeHead(303, {
    ...BASE_HEADERS,
    ...cors,
    Location: '/',
    'Set-Cookie': sessionCookie(session),
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  });
  res.end();
  return true;
}
