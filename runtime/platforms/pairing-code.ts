import { createHash, randomInt } from 'node:crypto';

/** Crockford's base32 alphabet: no I, L, O or U, so a code read aloud or typed is not mistaken. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const LENGTH = 8;

/** A new pairing code: 8 random characters (40 bits) from the CSPRNG, shown as `XXXX-XXXX`. */
export function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * A typed code in its canonical form (case, spaces and dashes ignored; Crockford's I/L → 1,
 * O → 0), or null when it cannot be a code.
 */
export function normalizePairingCode(input: string): string | null {
  const text = input.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
  if (text.length !== LENGTH) return null;
  for (const ch of text) if (!ALPHABET.includes(ch)) return null;
  return text;
}

/** What the store keeps of a code: its SHA-256 (a code is never stored in clear). */
export function hashPairingCode(platformId: string, canonical: string): string {
  return createHash('sha256').update(`snotra-pairing\0${platformId}\0${canonical}`).digest('hex');
}
