import type { Attributes } from '@opentelemetry/api';

/** Turns values into span attributes; every string passes the redactor (value and key scrub). */
export interface AttributeRedactor {
  redactString(value: string): string;
  redact(value: unknown): unknown;
}

/**
 * Attributes with every string value redacted and empty values left out: nothing reaches an
 * exporter that the store's redactor has not seen.
 */
export function redactedAttributes(
  redactor: AttributeRedactor,
  values: Readonly<Record<string, string | number | boolean | null | undefined>>,
): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === null || value === undefined) continue;
    out[key] = typeof value === 'string' ? redactor.redactString(value) : value;
  }
  return out;
}

/** A JSON value as one attribute string: redacted as a value, then as text (a secret inside a key too). */
export function redactedJson(redactor: AttributeRedactor, value: unknown): string {
  return redactor.redactString(JSON.stringify(redactor.redact(value ?? null)) ?? 'null');
}
