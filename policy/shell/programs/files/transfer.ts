/**
 * Reads and writes of network and key tools: curl and wget (outputs written, uploads and
 * credentials read), scp and rsync (local operands only), openssl (-out written, keys read).
 */
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { flagValues, parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';
import { after } from './collector.ts';
import type { Collector } from './collector.ts';

const CURL_VALUE = 'oTdFKcDbEHXAeuxmwrCYyzUQ';
const CURL_LONG = [
  'output',
  'upload-file',
  'data',
  'data-binary',
  'data-ascii',
  'data-raw',
  'data-urlencode',
  'json',
  'form',
  'form-string',
  'config',
  'cookie-jar',
  'dump-header',
  'cookie',
  'cert',
  'key',
  'cacert',
  'header',
  'request',
  'user-agent',
  'referer',
  'user',
  'proxy',
  'max-time',
  'write-out',
  'range',
  'continue-at',
  'url',
  'resolve',
  'trace',
  'trace-ascii',
  'output-dir',
  'connect-timeout',
  'retry',
  'proxy-user',
  'netrc-file',
];

/** curl: -o, -c, -D, --trace are written; -T, -K, certificates and `@file` data are read. */
export const curl: Collector = (args, env) => {
  const p = parseOptions(args, { shortValue: CURL_VALUE, longValue: CURL_LONG });
  flagValues(p, 'o', 'output', 'c', 'cookie-jar', 'D', 'dump-header', 'trace', 'trace-ascii').forEach((f) =>
    env.write(f, true),
  );
  flagValues(p, 'output-dir').forEach((f) => env.write(f, false));
  flagValues(p, 'T', 'upload-file', 'K', 'config', 'E', 'cert', 'key', 'cacert', 'netrc-file').forEach((f) =>
    env.read(f),
  );
  for (const f of flagValues(p, 'd', 'data', 'data-binary', 'data-ascii', 'data-urlencode', 'json')) {
    const v = f.value;
    if (v === null) continue;
    const at = v.startsWith('@') ? 0 : v.indexOf('@');
    if (at >= 0 && (at === 0 || /^[A-Za-z0-9_.-]*$/.test(v.slice(0, at)))) env.read(after(f, at + 1));
  }
  for (const f of flagValues(p, 'F', 'form')) {
    const m = f.value === null ? null : /^[^=]*=[@<]([^;]*)/.exec(f.value);
    if (m) env.read({ ...literalField(m[1] ?? ''), tilde: (m[1] ?? '').startsWith('~') });
  }
  for (const f of flagValues(p, 'b', 'cookie')) if (f.value !== null && !f.value.includes('=')) env.read(f);
};

/** wget: -O, -o, -a and saved cookies are written; -P is a directory written; inputs are read. */
export const wget: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'OoaPiUeDTtwQlIXAR',
    longValue: [
      'output-document',
      'output-file',
      'append-output',
      'directory-prefix',
      'input-file',
      'post-file',
      'body-file',
      'load-cookies',
      'save-cookies',
      'certificate',
      'private-key',
      'ca-certificate',
      'user-agent',
      'header',
      'post-data',
      'method',
      'body-data',
      'tries',
      'timeout',
      'wait',
      'level',
    ],
  });
  flagValues(p, 'O', 'output-document', 'o', 'output-file', 'a', 'append-output', 'save-cookies').forEach(
    (f) => env.write(f, true),
  );
  flagValues(p, 'P', 'directory-prefix').forEach((f) => env.write(f, false));
  flagValues(
    p,
    'i',
    'input-file',
    'post-file',
    'body-file',
    'load-cookies',
    'certificate',
    'private-key',
    'ca-certificate',
  ).forEach((f) => env.read(f));
};

/** True for an rsync/scp operand that names a remote host (`host:path`, `user@host:path`, `rsync://`). */
export function isRemoteOperand(v: string): boolean {
  return /^[^/]*:/.test(v) && !/^[a-zA-Z]:[\\/]/.test(v);
}

/** scp, rsync: the local destination is written, local sources read (`host:path` is remote). */
export function remoteCopy(spec: OptionSpec): Collector {
  return (args, env) => {
    const p = parseOptions(args, spec);
    flagValues(p, 'i', 'F').forEach((f) => env.read(f));
    // rsync's lists and password file are read, its log written (`--files-from /etc/shadow`).
    flagValues(p, 'files-from', 'exclude-from', 'include-from', 'password-file').forEach((f) => env.read(f));
    flagValues(p, 'log-file').forEach((f) => env.write(f, true));
    if (p.operands.length < 2) return;
    const local = (f: Field): boolean => f.value === null || !isRemoteOperand(f.value);
    const dest = p.operands[p.operands.length - 1] as Field;
    if (local(dest)) env.write(dest, true);
    p.operands
      .slice(0, -1)
      .filter(local)
      .forEach((f) => env.read(f));
  };
}
/** openssl: -out and -keyout are written; -in, keys and certificates are read. */
export const openssl: Collector = (args, env) => {
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value;
    const next = args[i + 1];
    if (next === undefined || v === null || v === undefined) continue;
    if (['-out', '-keyout'].includes(v)) env.write(next, true);
    else if (['-in', '-key', '-inkey', '-signkey', '-CAkey', '-CA', '-cert', '-certfile'].includes(v))
      env.read(next);
  }
};
