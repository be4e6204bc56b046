import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ScriptedModel, type ScriptedStep } from '../actors/model/scripted.ts';
import { parseConfig } from './config/load.ts';
import { decideAsLocalUser } from './control/inbox.ts';
import { Runtime } from './runtime.ts';
import { internalsOf } from './internals.ts';

/** Where the demo reports what it does, one line at a time. */
export type DemoSay = (line: string) => void;

const call = (id: string, tool: string, args: unknown) => ({
  kind: 'calls' as const,
  calls: [{ id, tool, args }],
});

const SCRIPTS: Record<string, ScriptedStep[]> = {
  assistant: [
    {
      respond: call('c1', 'spawn_agent', {
        profile: 'explorer',
        task: 'Map this codebase: list its files and its exports.',
      }),
    },
    {
      expect: { kind: 'tool.result', tool: 'spawn_agent', contains: 'src/' },
      respond: call('c2', 'write_file', {
        path: 'NOTES.md',
        content: '# Codebase map\n\nsrc/app.ts and src/util.ts export the app.\n',
      }),
    },
    {
      expect: { kind: 'tool.result', tool: 'write_file' },
      respond: { kind: 'final', text: 'I mapped the codebase and wrote NOTES.md.' },
    },
  ],
  explorer: [
    { respond: call('e1', 'list_dir', { path: 'src' }) },
    {
      expect: { kind: 'tool.result', tool: 'list_dir' },
      respond: call('e2', 'search_files', { path: '.', pattern: '^export ' }),
    },
    {
      expect: { kind: 'tool.result', tool: 'search_files' },
      respond: call('e3', 'write_file', { path: 'x.txt', content: 'no' }),
    },
    {
      expect: { kind: 'tool.denied', tool: 'write_file' },
      respond: {
        kind: 'final',
        text: 'src/ holds app.ts (export function main) and util.ts (export function add).',
      },
    },
  ],
  reporter: [
    { respond: call('r1', 'write_file', { path: 'REPORT.md', content: 'Nightly report: all good.\n' }) },
    {
      expect: { kind: 'tool.result', tool: 'write_file' },
      respond: { kind: 'final', text: 'Report written.' },
    },
  ],
};

function workspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-demo-')));
  mkdirSync(join(dir, 'project', 'src'), { recursive: true });
  writeFileSync(join(dir, 'project', 'README.md'), '# demo app\n');
  writeFileSync(
    join(dir, 'project', 'src', 'app.ts'),
    "import { add } from './util.ts';\nexport function main() { return add(1, 2); }\n",
  );
  writeFileSync(
    join(dir, 'project', 'src', 'util.ts'),
    'export function add(a: number, b: number) { return a + b; }\n',
  );
  return dir;
}

/**
 * The walkthrough of `snotra demo` on a temporary workspace with the scripted model:
 * chat → Explorer sub-agent → approval → unattended park → restart → resume once → audit.
 * Returns true when every step behaved as the security model says.
 */
export async function runDemo(say: DemoSay, keep = false): Promise<boolean> {
  const dir = workspace();
  const loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: { assistant: { mode: 'ask' }, reporter: { mode: 'ask' } },
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );
  const model = new ScriptedModel(SCRIPTS);
  const quiet = new Writable({ write: (_c, _e, cb) => cb() });
  const checks: boolean[] = [];
  const check = (ok: boolean, what: string) => {
    checks.push(ok);
    say(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  };
  say(`workspace: ${join(dir, 'project')} (state in ${join(dir, 'state')})`);
  let rt = await Runtime.start({ loaded, model, logDestination: quiet });
  try {
    say('1. chat: the assistant asks an Explorer sub-agent to map the codebase');
    rt.onApproval((a, interaction) => {
      if (interaction !== 'attended') return;
      say(`   inline approval request: ${a.tool} → ${a.target ?? '-'} (${a.reason}); the human approves`);
      setTimeout(() => rt.decide(a.id, 'approved', 'demo-user'), 0);
    });
    const chat = await rt.chat('assistant', 'Map this codebase and write notes.');
    const explorerRun = `${chat.runId}/c1`;
    const explorer = internalsOf(rt).runs.contextOf(explorerRun);
    const denied = explorer?.transcript.find(
      (e) => e.role === 'observation' && e.observation.kind === 'tool.denied',
    );
    check(
      explorer?.outcome?.status === 'completed',
      `Explorer mapped the workspace: "${explorer?.outcome?.text ?? ''}"`,
    );
    check(denied !== undefined, 'Explorer tried to write and was refused (read-only profile)');
    check(!existsSync(join(dir, 'project', 'x.txt')), 'nothing the Explorer tried to write exists');
    check(
      chat.outcome.status === 'completed' && existsSync(join(dir, 'project', 'NOTES.md')),
      `assistant: "${chat.outcome.text ?? chat.outcome.reason}"`,
    );

    say('2. an unattended task needs approval: it parks in the Inbox');
    const taskRun = await rt.runs.runTask('reporter', 'nightly-report', 'Write the nightly report.');
    let pending = internalsOf(rt).store.approvals.listPending({ taskId: 'nightly-report' })[0];
    for (let i = 0; i < 200 && (pending === undefined || internalsOf(rt).runs.isLive(taskRun)); i++) {
      await new Promise((r) => setTimeout(r, 25));
      pending = internalsOf(rt).store.approvals.listPending({ taskId: 'nightly-report' })[0];
    }
    check(
      pending !== undefined && !internalsOf(rt).runs.isLive(taskRun),
      `parked: Inbox ${pending?.id ?? '(none)'} for ${pending?.tool ?? '?'} → ${pending?.target ?? '?'}`,
    );

    say('3. the runtime stops; a human approves from the CLI while it is down');
    await rt.stop();
    const decided = pending ? await decideAsLocalUser(loaded.config.stateDir, pending.id, 'approved') : null;
    check(
      decided?.result.ok === true,
      `decided by ${decided?.user ?? '?'} (runtime notified: ${String(decided?.notified)})`,
    );

    say('4. restart: the parked run resumes and runs the approved call once');
    rt = await Runtime.start({ loaded, model, logDestination: quiet });
    const outcome = await rt.waitForRun(taskRun);
    check(outcome.status === 'completed', `task: "${outcome.text ?? outcome.reason}"`);
    check(
      readFileSync(join(dir, 'project', 'REPORT.md'), 'utf8') === 'Nightly report: all good.\n',
      'REPORT.md written exactly as approved',
    );
    await rt.stop();
    rt = await Runtime.start({ loaded, model, logDestination: quiet });
    const ledger = internalsOf(rt).store.ledger.lookup(`call:${taskRun}:r1`);
    check(
      ledger?.status === 'completed' && ledger.attempt === 1,
      'another restart re-runs nothing (ledger: completed, attempt 1)',
    );

    say('5. the audit trail of the task run');
    for (const e of internalsOf(rt).store.audit.list({ runId: taskRun })) {
      say(`   #${e.seq} ${e.kind.padEnd(18)} ${e.tool ?? ''} ${e.status ?? ''} ${e.ruleId ?? ''}`.trimEnd());
    }
    const chain = internalsOf(rt).store.audit.verifyChain();
    check(chain.ok, `audit chain verified (${chain.ok ? chain.count : 0} events)`);
  } finally {
    await rt.stop();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  const ok = checks.every(Boolean);
  say(ok ? 'demo finished: every step behaved as expected' : 'demo finished with failures');
  return ok;
}
