/**
 * What a command does to paths, recorded into the findings: reads, writes (a device is
 * hardline), probes (arguments of programs without a table), trees walked recursively, links
 * made, and redirection targets. Every path position must be static: a value only known at run
 * time, a `/proc/<pid>/cwd` spelling or a link made earlier in the command is a caution (a human
 * decides, even in `allow`).
 */
import type { CommandEnv, Resolved } from './env.ts';
import type { Field } from '../syntax/field.ts';
import type { Access, Findings } from './findings.ts';
import type { CwdScope } from './cwd.ts';
import { deviceKind } from './paths.ts';

/** The path-recording part of a CommandEnv, plus redirection targets. */
export type PathEffects = Pick<CommandEnv, 'read' | 'probe' | 'tree' | 'link' | 'write'> & {
  /** A `>`/`>>`/`&>` target: content goes there (a device is hardline). */
  redirect(f: Field): void;
};

function staticPath(findings: Findings, r: Resolved, f: Field, access: Access): void {
  if (r.unknown) {
    findings.needsHuman('caution.dynamic-path', `a path to ${access} is only known at run time`);
    return;
  }
  if (f.value !== null && /^\/proc\/(self|thread-self|\d+)\/(cwd|root)(\/|$)/.test(f.value)) {
    findings.needsHuman('caution.dynamic-path', `${f.value} depends on the process that opens it`);
  }
  if (r.refs.some((ref) => findings.isLinked(ref.text)))
    findings.needsHuman('caution.linked-path', 'a path made a link earlier in the command');
}

/** Path effects against the cwd `scope()` gives at the time of each call. */
export function pathEffects(findings: Findings, scope: () => CwdScope): PathEffects {
  const write = (f: Field, content: boolean, redirect: boolean): void => {
    if (f.proc && f.value === null) return; // `tee >(cmd)`, `> >(cmd)`: a pipe, not a path.
    const r = scope().resolve(f);
    if (r.unknown && content) {
      findings.cannot(
        'unanalyzable.dynamic-argument',
        redirect
          ? 'a redirection to a path only known at run time'
          : 'a command writes into a path only known at run time',
      );
    }
    staticPath(findings, r, f, 'write');
    for (const ref of r.refs) {
      const kind = deviceKind(ref.text, ref.glob);
      if (kind === 'device' || deviceKind(ref.win ?? '') === 'device') {
        if (redirect) findings.hit('hardline.block-device-redirect', `redirection into ${ref.text}`);
        else findings.hit('hardline.block-device-write', `a command writes to ${ref.text}`);
      } else if (kind !== 'benign') {
        findings.addWrite(ref.text);
        if (ref.glob) findings.addGlob(ref.pattern, 'write');
      }
    }
  };
  return {
    read: (f) => {
      const r = scope().resolve(f);
      staticPath(findings, r, f, 'read');
      for (const ref of r.refs) {
        if (deviceKind(ref.text) !== null) continue;
        findings.reads.add(ref.text);
        if (ref.glob) findings.addGlob(ref.pattern, 'read');
      }
    },
    probe: (f) => {
      if (f.proc && f.value === null) return;
      const r = scope().resolve(f);
      staticPath(findings, r, f, 'read');
      for (const ref of r.refs) {
        if (deviceKind(ref.win ?? '') === 'device')
          findings.hit('hardline.block-device-write', `a program is given the device ${ref.win ?? ''}`);
        if (deviceKind(ref.text, ref.glob) === 'benign') continue;
        // `C:\Windows\...` or `\\server\share`: a Windows absolute path, outside every POSIX root.
        const win = ref.win ?? '';
        if (/^[A-Za-z]:[\\/]|^\\\\/.test(win)) findings.probes.add('/' + win.replace(/\\/g, '/'));
        else findings.probes.add(ref.text);
        if (ref.glob) findings.addGlob(ref.pattern, 'write');
      }
    },
    tree: (f, access, how) => {
      const r = scope().resolve(f);
      staticPath(findings, r, f, access);
      for (const ref of r.refs) findings.addTree(ref.glob ? ref.pattern : ref.text, access, how);
    },
    link: (f) => {
      for (const ref of scope().resolve(f).refs) findings.addLink(ref.text);
    },
    write: (f, content) => write(f, content, false),
    redirect: (f) => write(f, true, true),
  };
}
