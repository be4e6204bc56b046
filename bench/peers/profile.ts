/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): self time by area of the code base and
 * the hottest functions, as shares of the sampled non-idle time. Used for the park/resume
 * breakdown in bench/README.md:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/peers/ours.ts inproc /tmp/pb 1000
 *   npx tsx bench/peers/profile.ts /tmp/prof/CPU.*.cpuprofile
 *
 * Native frames (SQLite inside better-sqlite3, fsync) are charged to the JavaScript function
 * that called them, so "better-sqlite3" is the time spent inside its calls.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const AREAS: Array<[string, RegExp]> = [
  ['better-sqlite3 (SQLite, fsync)', /node_modules\/better-sqlite3\//],
  ['xstate', /node_modules\/xstate\//],
  ['nats client', /node_modules\/@nats-io\//],
  ['zod', /node_modules\/zod\//],
  ['pino', /node_modules\/(pino|sonic-boom|thread-stream)/],
  ['tsx/esbuild (loader)', /node_modules\/(tsx|esbuild)\//],
  ['other node_modules', /node_modules\//],
  ['store/', /\/store\//],
  ['runtime/bus/', /\/runtime\/bus\//],
  ['runtime/runs/', /\/runtime\/runs\//],
  ['runtime/ (other)', /\/runtime\//],
  ['machines/', /\/machines\//],
  ['actors/', /\/actors\//],
  ['policy/', /\/policy\//],
  ['bench/', /\/bench\//],
  ['node internals', /^node:/],
];

function areaOf(n: Node): string {
  const { url, functionName } = n.callFrame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(program)') return '(program)';
    return 'native/builtin';
  }
  for (const [name, re] of AREAS) if (re.test(url)) return name;
  return 'other';
}

for (const file of process.argv.slice(2)) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  // Native frames (no URL, not GC/idle/program) take the area of their nearest JS caller.
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areaCache = new Map<number, string>();
  const attributed = (id: number): string => {
    const hit = areaCache.get(id);
    if (hit !== undefined) return hit;
    const n = byId.get(id);
    let a = n === undefined ? 'other' : areaOf(n);
    if (a === 'native/builtin') {
      const up = parent.get(id);
      if (up !== undefined) a = attributed(up);
    }
    areaCache.set(id, a);
    return a;
  };
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    const a = attributed(id);
    if (a === '(idle)') return;
    total += dt;
    areas.set(a, (areas.get(a) ?? 0) + dt);
    const n = byId.get(id);
    if (n !== undefined) {
      const { functionName, url, lineNumber } = n.callFrame;
      const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|wt-[^/]+)\//, '')}:${lineNumber + 1}`;
      fns.set(key, (fns.get(key) ?? 0) + dt);
    }
  });
  const pct = (x: number): string => `${((100 * x) / total).toFixed(1)}%`;
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms non-idle`);
  for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1])) console.log(`  ${pct(t).padStart(6)}  ${a}`);
  console.log('  top self time:');
  for (const [f, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, 25))
    console.log(`  ${pct(t).padStart(6)}  ${f}`);
}
