import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyStateNode } from 'xstate';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../surfaces/cli/main.ts';
import { machineDocs } from '../../runtime/viz/docs.ts';
import { graphOf, MACHINES } from '../../runtime/viz/machines.ts';
import { toDot, toMermaid, toSvg } from '../../runtime/viz/render.ts';

function nodes(n: AnyStateNode): AnyStateNode[] {
  return [n, ...Object.values(n.states).flatMap(nodes)];
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      stdout: (t: string) => void out.push(t),
      stderr: (t: string) => void err.push(t),
      stdinLines: async function* () {},
    },
  };
}

describe('machine graphs come from the machine definitions', () => {
  for (const [name, machine] of Object.entries(MACHINES)) {
    it(`${name}: every state and every transition of the definition, with its type, events and guards`, () => {
      const g = graphOf(name);
      expect(g).not.toBeNull();
      const defined = nodes(machine.root);
      expect(g?.states.map((s) => s.id).sort()).toEqual(defined.map((n) => n.id).sort());
      for (const n of defined) expect(g?.states.find((s) => s.id === n.id)?.type).toBe(n.type);
      // Each (source, event, target) of the definition is an edge, eventless ones included; a
      // transition without a target stays in its state.
      const expected = defined.flatMap((n) => [
        ...[...n.transitions.values()]
          .flat()
          .flatMap((t) => (t.target ?? [n]).map((x) => `${n.id}->${x.id}`)),
        ...(n.always ?? []).flatMap((t) => (t.target ?? [n]).map((x) => `${n.id}->${x.id}`)),
      ]);
      expect(g?.transitions.map((t) => `${t.source}->${t.target}`).sort()).toEqual(expected.sort());
    });
  }

  it('the run machine shows the seed lifecycle: decide → approval → resume → execute, final states, named guards', () => {
    const g = graphOf('run');
    const edge = (source: string, target: string) =>
      g?.transitions.filter((t) => t.source === `run.${source}` && t.target === `run.${target}`);
    expect(edge('running.acting.deciding', 'waiting_for_approval')).toEqual([
      {
        source: 'run.running.acting.deciding',
        target: 'run.waiting_for_approval',
        event: 'done(decide)',
        guard: null,
      },
    ]);
    expect(edge('running.acting.deciding', 'running.acting.executing')?.[0]?.guard).toBe('isAllowed');
    expect(edge('resuming', 'running.acting.executing')?.[0]?.event).toBe('always');
    expect(
      g?.states
        .filter((s) => s.type === 'final')
        .map((s) => s.key)
        .sort(),
    ).toEqual(['completed', 'denied', 'failed']);
    expect(g?.states.find((s) => s.id === 'run.running.stepping')?.invokes).toEqual(['modelStep']);
  });

  it('mermaid, DOT and SVG name every state; SVG is rendered offline by Graphviz in WebAssembly', async () => {
    const g = graphOf('run');
    if (g === null) throw new Error('no run graph');
    const mermaid = toMermaid(g);
    expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(mermaid).toContain('run_running_acting_deciding --> run_waiting_for_approval : done(decide)');
    const dot = toDot(g);
    const svg = await toSvg(g);
    expect(svg).toContain('<svg');
    for (const s of g.states) {
      if (s.parent !== null) expect(mermaid).toContain(`"${s.key}"`);
      // Compound states are clusters in DOT, entered through their entry point.
      expect(dot).toContain(g.states.some((c) => c.parent === s.id) ? `"cluster_${s.id}"` : `"${s.id}"`);
      expect(svg).toContain(`>${s.key}</text>`);
    }
  });

  it('the committed diagrams in docs/machines are current (run `npm run docs:machines` after changing a machine)', async () => {
    for (const [file, text] of Object.entries(await machineDocs())) {
      expect(readFileSync(new URL(`../../docs/machines/${file}`, import.meta.url), 'utf8'), file).toBe(text);
    }
  });
});

describe('snotra viz', () => {
  it('prints a machine in every format, and writes --out', async () => {
    const json = io();
    expect(await runCli(['viz', 'approval', '--format', 'json'], json.io)).toBe(0);
    expect(JSON.parse(json.out.join(''))).toMatchObject({ machine: 'approval' });
    const mermaid = io();
    expect(await runCli(['viz'], mermaid.io)).toBe(0);
    expect(mermaid.out.join('')).toContain('run_waiting_for_approval');
    const dot = io();
    expect(await runCli(['viz', 'goal', '--format', 'dot'], dot.io)).toBe(0);
    expect(dot.out.join('')).toBe(toDot(graphOf('goal') as NonNullable<ReturnType<typeof graphOf>>));
    // --out writes the file (relative to the working directory) and prints nothing; SVG as committed.
    const dir = mkdtempSync(join(tmpdir(), 'snotra-viz-'));
    try {
      const svg = io();
      expect(await runCli(['viz', 'run', '--format', 'svg', '--out', 'run.svg'], svg.io, dir)).toBe(0);
      expect(svg.out.join('')).toBe('');
      expect(readFileSync(join(dir, 'run.svg'), 'utf8')).toBe(
        readFileSync(new URL('../../docs/machines/run.svg', import.meta.url), 'utf8'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown machine and an unknown format, naming them (exit 2)', async () => {
    const a = io();
    expect(await runCli(['viz', 'rum'], a.io)).toBe(2);
    expect(a.err.join('')).toContain('unknown machine "rum"');
    const b = io();
    expect(await runCli(['viz', 'run', '--format', 'png'], b.io)).toBe(2);
    expect(b.err.join('')).toContain('got "png"');
  });
});
