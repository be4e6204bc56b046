// Embedding Snotra Runtime in your own program: start it in-process, send a chat, answer its
// approvals with your own code, wait for the run. Run: `node embedding.js [snotra.config.json]`.
import { Runtime, loadConfig, modelFromConfig, type ApprovalRecord } from 'snotra-runtime';

// The config names the workspace roots, the agents, their models and the state dir. Without
// `bus.url` the runtime starts its own nats-server (embedded defaults).
const loaded = loadConfig(process.argv[2] ?? 'snotra.config.json');
const runtime = await Runtime.start({ loaded, model: modelFromConfig(loaded), logLevel: 'warn' });

// Your approval UI: here a rule of our own; a real UI shows the tool, its target, the reason
// and rule, and asks. `decide` is single use and says why when it changes nothing.
function review(approval: ApprovalRecord): { ok: boolean; why: string } {
  const markdown = approval.tool === 'write_file' && /\.md$/.test(approval.target ?? '');
  return markdown ? { ok: true, why: 'notes are fine' } : { ok: false, why: 'only Markdown files here' };
}
runtime.onApproval((approval, interaction) => {
  const { ok, why } = review(approval);
  console.log(
    `approval ${approval.tool} ${approval.target ?? ''} (${interaction}): ${ok ? 'approved' : 'denied'}`,
  );
  // Decide outside the listener, as a UI would after the human clicked.
  setTimeout(() => {
    const result = runtime.decide(approval.id, ok ? 'approved' : 'denied', 'embedding-example', why);
    if (!result.ok) console.error(`not decided: ${result.message}`);
  }, 0);
});

try {
  const { runId, outcome } = await runtime.chat('assistant', 'Write today’s notes to NOTES.md');
  console.log(JSON.stringify({ runId, outcome }));
  process.exitCode = outcome.status === 'completed' ? 0 : 1;
} finally {
  await runtime.stop();
}
