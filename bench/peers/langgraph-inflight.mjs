// LangGraph.js side of the in-flight comparison: the graph of ../shared/peers/langgraph/bench.mjs
// (START → act → END; act increments A, interrupt(), increments B) with its SQLite checkpointer,
// driven by C concurrent `graph.invoke` calls on distinct thread_ids: park N threads, then resume
// them, C in flight. bench/peers/run.ts copies this file next to bench.mjs (so the packages
// resolve from that folder's node_modules) and runs: node langgraph-inflight.mjs DB N C
// With a fourth argument `resume` it is a fresh process on N threads parked by `bench.mjs park`:
// open the checkpointer and resume them all, C in flight (the in-flight fresh-process row).
/* global performance */
const T0 = performance.now(); // before the heavy imports, like bench.mjs
const [, , db, nArg, cArg, only] = process.argv;
const { StateGraph, Annotation, START, END, interrupt, Command } = await import('@langchain/langgraph');
const { SqliteSaver } = await import('@langchain/langgraph-checkpoint-sqlite');

const counters = { A: 0, B: 0 };
const State = Annotation.Root({ decision: Annotation() });
const act = () => {
  counters.A++;
  const decision = interrupt({ tool: 'write_file' });
  counters.B++;
  return { decision };
};
const tImported = performance.now();
const saver = SqliteSaver.fromConnString(db);
const graph = new StateGraph(State)
  .addNode('act', act)
  .addEdge(START, 'act')
  .addEdge('act', END)
  .compile({ checkpointer: saver });
const cfg = (i) => ({ configurable: { thread_id: `thread-${i}` } });

async function timed(n, c, fn) {
  const lat = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const a = performance.now();
      await fn(i);
      lat[i] = performance.now() - a;
    }
  };
  await Promise.all(Array.from({ length: Math.min(c, n) }, worker));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  lat.sort();
  return {
    per_s: (n * 1000) / ms,
    total_ms: ms,
    p50_ms: lat[n >> 1],
    p99_ms: lat[Math.floor(n * 0.99)],
    cpu_ms: (cpu.user + cpu.system) / 1000,
  };
}

const n = Number(nArg ?? 1000);
const c = Number(cArg ?? 64);
const resumeAll = () =>
  timed(n, c, async (i) => {
    const out = await graph.invoke(new Command({ resume: 'approve' }), cfg(i));
    if (out.decision !== 'approve' || out.__interrupt__) throw new Error('resume did not complete');
  });
if (only === 'resume') {
  const tOpened = performance.now();
  const resume = await resumeAll();
  console.log(
    JSON.stringify({
      import_ms: tImported - T0,
      open_ms: tOpened - tImported,
      resume,
      counters,
      in_flight: c,
      first_line_to_done_ms: performance.now() - T0,
    }),
  );
} else {
  const park = await timed(n, c, async (i) => {
    const out = await graph.invoke({ decision: null }, cfg(i));
    if (!out.__interrupt__?.length) throw new Error('expected an interrupt');
  });
  const resume = await resumeAll();
  console.log(JSON.stringify({ park, resume, counters, in_flight: c }));
}
