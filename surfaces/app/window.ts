/**
 * The app window: Chromium through playwright-core, showing the sidecar's web app. The token is
 * added by the shell to this origin's /v1 requests only (request interception, set up before the
 * page loads): the page itself never holds it, and no other origin ever sees it. Requests to any
 * other origin are refused.
 */
import { accessSync, constants, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page, type Route } from 'playwright-core';
import { POSIX_ENV_ALLOWLIST, WINDOWS_ENV_ALLOWLIST } from '../../runtime/index.ts';
import { makeProfileDir, sweepLeftoverProfiles } from './profile-dir.ts';

/** Debian's Chromium; `CHROME_PATH` names another Chromium or Chrome. */
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

export class ChromiumMissingError extends Error {
  readonly code = 'chromium_missing';
}

/** The browser to start: `CHROME_PATH`, else /usr/bin/chromium; a clear error when it is not there. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.CHROME_PATH !== undefined && env.CHROME_PATH !== '';
  const path = fromEnv ? (env.CHROME_PATH as string) : DEFAULT_CHROMIUM;
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new ChromiumMissingError(
      `${fromEnv ? `CHROME_PATH ${JSON.stringify(path)}` : `Chromium (${path})`} is not an executable file. ` +
        'Install it with `apt-get install -y chromium` (Debian/Ubuntu), or set CHROME_PATH to a Chromium or Chrome binary.',
    );
  }
}

/**
 * Why a visible window cannot open here, or null: on Linux (and the BSDs) Chromium needs an X11
 * or Wayland display, named by `DISPLAY` or `WAYLAND_DISPLAY`. Checked before anything starts,
 * so a headless machine gets the fix instead of Chromium's own launch error.
 */
export function displayProblem(
  headless: boolean,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | null {
  if (headless || platform === 'darwin' || platform === 'win32') return null;
  const has = (name: string): boolean => (env[name] ?? '').trim() !== '';
  if (has('DISPLAY') || has('WAYLAND_DISPLAY')) return null;
  return (
    'no display to open the app window on (DISPLAY and WAYLAND_DISPLAY are unset). ' +
    'Run `snotra app --headless` (the runtime and its web app without a window), ' +
    'or `snotra start` and open the sidecar from a machine with a browser.'
  );
}

export interface AppWindow {
  readonly page: Page;
  /** `http://127.0.0.1:<port>` of Chromium's DevTools, only when asked for (tests, headless only). */
  readonly devtools: string | null;
  /** Resolves once the window (its page or the whole browser) is closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export interface WindowOptions {
  /** The sidecar's origin, `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The launch token added to /v1 requests; null for a window logged in by a login URL (a cookie session). */
  readonly token: string | null;
  /** The first URL the window opens (a single-use login URL); default the origin's `/`. */
  readonly entry?: string;
  readonly headless: boolean;
  readonly executablePath: string;
  /** Open Chromium's DevTools endpoint on 127.0.0.1 (a random port) for a test to drive the page. */
  readonly devtools: boolean;
}

function parsed(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** Whether a request goes to the sidecar's /v1 API (the only requests that get the token). */
export function isApiRequest(url: string, origin: string): boolean {
  const u = parsed(url);
  return u !== null && u.origin === origin && u.pathname.startsWith('/v1/');
}

export async function openWindow(o: WindowOptions): Promise<AppWindow> {
  // What killed shells left behind goes first; this launch's profile is removed when it closes.
  sweepLeftoverProfiles();
  const profile = makeProfileDir();
  const args = [
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-sync',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-default-apps',
    '--disable-extensions',
    '--password-store=basic',
  ];
  // An app window (no tabs, no address bar); it opens blank and is navigated once the token route is in place.
  if (!o.headless) args.push('--app=about:blank', '--window-size=1200,800');
  if (o.devtools) args.push('--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1');
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: o.executablePath,
      headless: o.headless,
      args,
      // Chromium's own sandbox needs an unprivileged user (as root it cannot start).
      chromiumSandbox: process.getuid?.() !== 0,
      viewport: o.headless ? { width: 1200, height: 800 } : null,
      acceptDownloads: false,
      serviceWorkers: 'block',
      env: chromiumEnv(),
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  const authorization = o.token === null ? null : `Bearer ${o.token}`;
  await context.route('**/*', (route: Route) => {
    const url = route.request().url();
    if (authorization !== null && isApiRequest(url, o.origin))
      return route.continue({ headers: { ...route.request().headers(), authorization } });
    if (parsed(url)?.origin === o.origin) return route.continue();
    // The app talks to its own origin only (its CSP says the same); nothing else is fetched.
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const closed = new Promise<void>((resolve) => {
    page.once('close', () => resolve());
    context.once('close', () => resolve());
  });
  // A second window (window.open, a link with a target) is closed: the app is one window.
  context.on('page', (p) => void p.close().catch(() => {}));
  await page.goto(o.entry ?? `${o.origin}/`);
  const devtools = o.devtools ? devtoolsUrl(profile) : null;
  let closing: Promise<void> | null = null;
  return {
    page,
    devtools,
    closed,
    close() {
      closing ??= context
        .close()
        .catch(() => {})
        // Chromium may still be writing its profile as it exits (a browser closed from outside):
        // retried, and never an error of the close (a leftover profile is a temp dir, not a failure).
        .finally(() => {
          try {
            rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
          } catch {
            // Left in the temp dir.
          }
        });
      return closing;
    },
  };
}

/**
 * What a desktop session needs to show a window and its fonts (X11, Wayland, D-Bus, XDG dirs);
 * none of them carries a credential.
 */
export const DESKTOP_ENV: readonly string[] = [
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'XDG_RUNTIME_DIR',
  'XDG_SESSION_TYPE',
  'XDG_CURRENT_DESKTOP',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_DATA_DIRS',
  'XDG_CONFIG_DIRS',
  'DBUS_SESSION_BUS_ADDRESS',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
];

/**
 * Chromium's environment: the allowlist every child gets (DESIGN.md §10: PATH, HOME, LANG, …,
 * every `LC_*`) plus the desktop session's variables. Nothing else of this process's environment
 * reaches the browser: not the secrets of the env store (`SNOTRA_SECRET_*`, which the runtime
 * child needs and gets), not an API key or proxy setting the user's shell holds.
 */
export function chromiumEnv(
  from: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const names = new Set(
    (platform === 'win32' ? WINDOWS_ENV_ALLOWLIST : [...POSIX_ENV_ALLOWLIST, ...DESKTOP_ENV]).map((n) =>
      n.toUpperCase(),
    ),
  );
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(from)) {
    if (v === undefined) continue;
    const name = platform === 'win32' ? k.toUpperCase() : k;
    if (names.has(name) || (platform !== 'win32' && name.startsWith('LC_'))) env[k] = v;
  }
  return env;
}

/** The DevTools endpoint Chromium wrote into the profile (`DevToolsActivePort`: port, then path). */
function devtoolsUrl(profile: string): string {
  const port = readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]?.trim();
  if (port === undefined || !/^\d+$/.test(port)) throw new Error('Chromium did not report its DevTools port');
  return `http://127.0.0.1:${port}`;
}
