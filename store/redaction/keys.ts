/**
 * Which object keys hold secrets. Keys are compared in a normalized form (lower case, letters
 * and digits only), so `api_key`, `apiKey`, `API-KEY` and `x-api-key` all match `apikey`.
 */

/** Normalized fragments that make a key sensitive wherever they appear in it. */
export const SENSITIVE_KEY_FRAGMENTS: readonly string[] = [
  'token',
  'password',
  'passwd',
  'passphrase',
  'secret',
  'authorization',
  'cookie',
  'apikey',
  'privatekey',
  'credential',
  'sessionkey',
  'sessionsecret',
  'accesskey',
  'signingkey',
  'encryptionkey',
  'clientsecret',
];

/** Normalized keys that are sensitive only as a whole word (as fragments they match too much). */
export const SENSITIVE_EXACT_KEYS: readonly string[] = ['auth', 'pwd', 'pass', 'bearer', 'jwt', 'otp', 'pin'];

/**
 * Counters and settings that contain `token` but hold no secret (model usage, limits). Without
 * this list a run's `usage.totalTokens` would be censored and its snapshot could not restore.
 */
const BENIGN_KEY = /(tokens|tokencount|tokenlimit|tokenizer|tokenusage|tokenbudget)$/;

/** Lower-cases a key and drops everything that is not a letter or digit. */
export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Whether `key` names a secret by the built-in rules or is one of `marked` (already normalized). */
export function isSensitiveKey(key: string, marked: ReadonlySet<string>): boolean {
  const norm = normalizeKey(key);
  if (norm.length === 0) return false;
  return marked.has(norm) || isBuiltInSensitive(norm);
}

/** The built-in rules on a normalized key. */
export function isBuiltInSensitive(norm: string): boolean {
  if (SENSITIVE_EXACT_KEYS.includes(norm)) return true;
  if (BENIGN_KEY.test(norm)) return false;
  for (const fragment of SENSITIVE_KEY_FRAGMENTS) {
    if (norm.includes(fragment)) return true;
  }
  return false;
}
