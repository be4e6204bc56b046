/**
 * Credential shapes recognized inside free text even when no secret was registered: bearer and
 * basic authorization values, passwords in URLs, sensitive query parameters and `key=value` /
 * `"key": "value"` pairs with a sensitive key. Defence in depth behind key and value redaction.
 */

const SCHEMES = /(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+@/gi;
const QUERY_PARAM =
  /([?&;](?:[a-z0-9_.-]*?(?:token|key|secret|password|passwd|signature|sig|auth|credential)[a-z0-9_.-]*)=)[^&#\s"']+/gi;
const KEY_VALUE =
  /((?:password|passwd|passphrase|secret|token|api[_-]?key|private[_-]?key|authorization|cookie)["']?\s*[:=]\s*["']?)([^"'\s,;&}]{2,})/gi;

/**
 * Cheap pre-check: the part each pattern cannot match without (a scheme word and a space, `://`,
 * a sensitive query name and `=`, a sensitive key and `:` or `=`). Ids such as `call:run-1:c-2`
 * no longer run all four patterns. A property test keeps it a superset of the patterns.
 */
const ANY_SHAPE = /[:=]|bearer|basic/i;
const TRIGGER =
  /(?:bearer|basic)\s|:\/\/|[?&;][a-z0-9_.-]*?(?:token|key|secret|password|passwd|signature|sig|auth|credential)[a-z0-9_.-]*=|(?:password|passwd|passphrase|secret|token|api[_-]?key|private[_-]?key|authorization|cookie)["']?\s*[:=]/i;

/** Replaces every recognized credential shape in `text` with `censor`. */
export function scrubCredentialShapes(text: string, censor: string): string {
  // Most texts have neither `:` nor `=`: one cheap test. The rest (ids like `call:run-1:c-2`,
  // code) get the precise test before the four patterns.
  if (!ANY_SHAPE.test(text) || !TRIGGER.test(text)) return text;
  return scrubEveryShape(text, censor);
}

/** @internal The patterns without the pre-check (for the test that keeps the pre-check honest). */
export function scrubEveryShape(text: string, censor: string): string {
  return text
    .replace(SCHEMES, (_m, prefix: string) => `${prefix}${censor}`)
    .replace(URL_USERINFO, (_m, scheme: string) => `${scheme}${censor}@`)
    .replace(QUERY_PARAM, (_m, name: string) => `${name}${censor}`)
    .replace(KEY_VALUE, (m, prefix: string, value: string) => (value === censor ? m : `${prefix}${censor}`));
}
