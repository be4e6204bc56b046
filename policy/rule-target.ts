/**
 * `target` rules: a glob (`*` any run of characters, `?` one character, case ignored) on the
 * value of an external tool's declared target argument — a channel, a host, a URL. A URL is
 * matched by its host, as the URL parser reads it (`HTTPS://API.Example.COM.` and
 * `https://user@api.example.com/` have the host `api.example.com`). A value that looks like a
 * URL but does not parse possibly matches.
 */
import type { Match } from './rule-command.ts';

const MAX_CACHED = 256;
const patterns = new Map<string, RegExp>();

function regexOf(glob: string): RegExp {
  let re = patterns.get(glob);
  if (re === undefined) {
    const body = [...glob]
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${body}$`, 'is');
    if (patterns.size >= MAX_CACHED) patterns.clear();
    patterns.set(glob, re);
  }
  return re;
}

const URL_LIKE = /^[a-z][a-z0-9+.-]*:/i;

/** The host a URL-shaped value names, without a trailing dot; null when it has none. */
export function hostOf(value: string): string | null | 'unparsable' {
  if (!URL_LIKE.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'unparsable';
  }
  const host = url.hostname.replace(/\.$/, '').toLowerCase();
  return host === '' ? null : host.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Whether one of `values` (the call's target values) matches `glob`. A URL is matched by its
 * host, and by its normalized form when the glob itself is a URL (`https://api.example.com/v1/*`);
 * any other value as written.
 */
export function matchTarget(glob: string, values: readonly string[]): Match {
  const re = regexOf(glob);
  let m: Match = 'no';
  for (const v of values) {
    const host = hostOf(v);
    if (host === 'unparsable') m = 'maybe';
    else if (host === null) {
      if (re.test(v)) return 'yes';
    } else if (re.test(host) || (glob.includes('://') && re.test(new URL(v).href))) return 'yes';
  }
  return m;
}
