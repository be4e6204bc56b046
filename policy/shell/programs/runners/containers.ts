/**
 * Container runners (docker, podman, nerdctl): what runs inside a container is not followed, but
 * a container that mounts `/`, a home or a system directory from the host, or runs privileged,
 * can do to the host what the hardline rules forbid — such a command is unanalyzable.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { targetClass } from '../../rules/kit.ts';
import type { WrapResult, Wrapper } from './wrap.ts';

const RUN_VERBS = new Set(['run', 'create', 'exec', 'start']);
const HOST_FLAGS = /^--(privileged|pid=host|userns=host|volumes-from)/;

function unfollowable(detail: string): WrapResult {
  return { kind: 'unknown', ruleId: 'unanalyzable.unfollowable-runner', detail };
}

/** The host side of a `-v SRC:DST` / `--mount source=SRC` specification. */
function hostSource(spec: string, mount: boolean): string | null {
  if (mount) {
    const m = /(?:^|,)(?:source|src)=([^,]*)/.exec(spec);
    return m ? (m[1] ?? null) : null;
  }
  const drive = /^[a-zA-Z]:[\\/]/.test(spec) ? 2 : 0;
  const colon = spec.indexOf(':', drive);
  return colon < 0 ? null : spec.slice(0, colon);
}

function protectedMount(spec: Field, mount: boolean, env: CommandEnv): boolean | null {
  if (spec.value === null) return null;
  const source = hostSource(spec.value, mount);
  if (source === null || source === '') return false;
  const field = { ...literalField(source), tilde: source.startsWith('~') };
  const t = targetClass(field, env, true);
  if (t.unknown) return null;
  return t.cls !== null;
}

/** docker/podman/nerdctl: host-level mounts and privileges make the command unanalyzable. */
export const container: Wrapper = (args, env, name) => {
  const verbIndex = args.findIndex((a) => a.value !== null && !a.value.startsWith('-'));
  let verb = verbIndex >= 0 ? args[verbIndex]?.value : undefined;
  let rest = args.slice(verbIndex + 1);
  if (verb === 'container' && rest[0]?.value) {
    verb = rest[0].value;
    rest = rest.slice(1);
  }
  if (verb === undefined || verb === null || !RUN_VERBS.has(verb)) return { kind: 'done' };
  for (let i = 0; i < rest.length; i++) {
    const f = rest[i] as Field;
    const v = f.value;
    if (v === null) {
      if (f.prefix.startsWith('-') || f.splittable)
        return unfollowable(`${name} ${verb} with a non-literal option`);
      continue;
    }
    if (HOST_FLAGS.test(v)) return unfollowable(`${name} ${verb} ${v} reaches the host`);
    const long = /^--(volume|mount)(=(.*))?$/.exec(v);
    const short = /^-v(.*)$/.exec(v);
    if (long === null && short === null) continue;
    const mount = long?.[1] === 'mount';
    const inline = long ? long[3] : short?.[1] !== '' ? short?.[1] : undefined;
    const spec = inline !== undefined ? literalField(inline) : rest[i + 1];
    if (inline === undefined) i++;
    if (spec === undefined) continue;
    const p = protectedMount(spec, mount, env);
    if (p !== false)
      return unfollowable(`${name} ${verb} mounts a host path that is protected or only known at run time`);
  }
  return { kind: 'done' };
};

/** Container runners by program name. */
export const CONTAINER_RUNNERS: Readonly<Record<string, Wrapper>> = {
  docker: container,
  podman: container,
  nerdctl: container,
};
