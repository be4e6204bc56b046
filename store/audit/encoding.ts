/**
 * How an `audit_log` row's body is stored (schema version 8): its JSON text (the array of its
 * events' hashed bodies) with the commonest fragments of event bodies (FRAGMENTS) and the row's
 * own run id replaced by one control character each. JSON text never holds a raw control
 * character (JSON.stringify escapes U+0000–U+001F), so the codes cannot be confused with content,
 * a body without them (every row of versions 3–7) decodes to itself, and decoding gives back the
 * exact text every hash covers. The column stays TEXT: plain SQL decodes it (`auditDecodeSql`, the
 * `audit_events` view), so ad-hoc SQL and other SQLite tools still read the log.
 *
 * Chosen over DEFLATE for rows (measured, bench/README.md "Bytes per parked run — session 3"):
 * a zlib call costs ~25 µs for its set-up alone, which halved one-event appends; this one pass
 * costs ~1–3 µs an event.
 */

/** `\"`: a quote inside the `detail` string (a JSON text within the body's JSON). */
const Q = '\\"';

/**
 * Code k (1–30) stands for FRAGMENTS[k - 1]. FROZEN: stored rows decode with exactly these
 * strings (a test pins them); a new fragment list needs a new schema version. None holds a
 * control character, and each ends where the next field begins, so they do not overlap.
 */
export const FRAGMENTS: readonly string[] = [
  '[[1,',
  '"]]',
  '"],[1,',
  ',null,null,null,null,null,',
  ',null,null,',
  '"proposed","',
  '"policy_decided","',
  '"approval_requested","',
  '"approval_resolved","',
  '"started","',
  '"completed","',
  '"failed","',
  '"external",',
  '"write-local",',
  '"mode.ask",',
  `"approval-required",null,"{${Q}reason${Q}:${Q}`,
  `${Q},${Q}ruleSource${Q}:${Q}`,
  `${Q},${Q}step${Q}:`,
  `,${Q}humanRequired${Q}:true,${Q}targets${Q}:[`,
  `,${Q}humanRequired${Q}:false,${Q}targets${Q}:[`,
  `{${Q}argument${Q}:${Q}path${Q},${Q}input${Q}:${Q}`,
  `${Q},${Q}resolved${Q}:${Q}`,
  `${Q},${Q}root${Q}:${Q}`,
  `${Q},${Q}access${Q}:${Q}read-write${Q}}`,
  `"pending",null,"{${Q}approvalId${Q}:${Q}apr:`,
  `${Q},${Q}taskId${Q}:`,
  `,${Q}parentAgentId${Q}:null,${Q}reason${Q}:${Q}`,
  `${Q},${Q}expiresAt${Q}:`,
  `${Q},${Q}idempotencyKey${Q}:${Q}call:`,
  `"{${Q}idempotencyKey${Q}:${Q}call:`,
];

/** The code standing for the row's run id (its `run_id` column). */
export const RUN_ID_CODE = 0x1f;

// The codes are control characters by design (JSON text never holds one raw).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x01-\x1f]/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\x01-\x1f]/g;

/** Each fragment's code. */
const CODE_OF = new Map(FRAGMENTS.map((text, i) => [text, String.fromCharCode(i + 1)]));

/**
 * Every fragment, longest first (at one position the longest one that matches wins), in one
 * regular expression: one pass over the text (a replaceAll per fragment cost 3× as much).
 */
const ANY_FRAGMENT = new RegExp(
  [...FRAGMENTS]
    .sort((a, b) => b.length - a.length)
    .map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|'),
  'g',
);

/** Whether `runId` can stand behind RUN_ID_CODE: present, and free of control characters. */
function usableRunId(runId: string | null): runId is string {
  return runId !== null && runId.length > 1 && !CONTROL.test(runId);
}

/**
 * The stored form of a row's body: `text` (JSON text, so free of raw control characters) with
 * every fragment and every occurrence of `runId` replaced by its code.
 */
export function encodeAuditBody(text: string, runId: string | null): string {
  let out = text.replace(ANY_FRAGMENT, (fragment) => CODE_OF.get(fragment) ?? fragment);
  if (usableRunId(runId) && out.includes(runId))
    out = out.replaceAll(runId, String.fromCharCode(RUN_ID_CODE));
  return out;
}

/**
 * A stored body's JSON text, given its row's run id. A body with no code (versions 3–7) is
 * returned as it is. A code the row cannot explain (RUN_ID_CODE in a row without a usable run
 * id: a tampered row) is kept, so the text does not parse or hash and verification reports it.
 */
export function decodeAuditBody(stored: string, runId: string | null): string {
  if (!CONTROL.test(stored)) return stored;
  const run = usableRunId(runId) ? runId : null;
  return stored.replace(CONTROLS, (code) => {
    const k = code.charCodeAt(0);
    if (k === RUN_ID_CODE) return run ?? code;
    return FRAGMENTS[k - 1] ?? code;
  });
}

/** Replacements per decoding stage: nested deeper, the SQL parser of some sqlite3 builds overflows. */
const SQL_STAGE = 8;

/**
 * Common table expressions (the text after `WITH`) decoding rows in plain SQL, as
 * `decodeAuditBody` does: `audit_d0` is `source` (a SELECT of seq, last_seq, run_id, body,
 * hashes), each later stage replaces a few codes, and `audit_decoded` has the same columns with
 * `body` decoded.
 */
export function auditDecodeSql(source: string): string {
  const ctes = [`audit_d0 AS (${source})`];
  for (let start = 0; start < FRAGMENTS.length; start += SQL_STAGE) {
    let body = 'body';
    FRAGMENTS.slice(start, start + SQL_STAGE).forEach((fragment, j) => {
      body = `replace(${body}, char(${start + j + 1}), '${fragment.replaceAll("'", "''")}')`;
    });
    const stage = start / SQL_STAGE;
    ctes.push(
      `audit_d${stage + 1} AS (SELECT seq, last_seq, run_id, ${body} AS body, hashes FROM audit_d${stage})`,
    );
  }
  const last = Math.ceil(FRAGMENTS.length / SQL_STAGE);
  const usable = `run_id IS NOT NULL AND length(run_id) > 1 AND run_id NOT GLOB '*[' || char(1) || '-' || char(31) || ']*'`;
  ctes.push(
    `audit_decoded AS (SELECT seq, last_seq, run_id, CASE WHEN ${usable} THEN replace(body, char(${RUN_ID_CODE}), run_id) ELSE body END AS body, hashes FROM audit_d${last})`,
  );
  return ctes.join(',\n');
}
