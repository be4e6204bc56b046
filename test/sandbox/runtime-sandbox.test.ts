/**
 * The OS sandbox through the real runtime (issue 12): in `allow` mode a script that the shell
 * analyzer cannot see into — written by an earlier `write_file` call, run by `shell` — tries to
 * read credentials, write outside the roots, write git hooks and config, touch the runtime's
 * state dir, open a TCP connection and leave `setsid` daemons. Every attempt fails, nothing
 * changes on disk outside the writable root, and the same script doing only allowed work
 * succeeds.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  daemonsScript,
  fingerprint,
  processesRunning,
  sandboxWorkspace,
  startRuntimeChild,
  uniqueSleeps,
  within,
  type SandboxWorkspace,
} from './support.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ALLOWED = ['write-root', 'read-root', 'read-docs', 'tmp-scratch'] as const;
const ATTACKS = [
  'read-ssh-key',
  'list-ssh',
  'read-ssh-tilde',
  'read-aws',
  'write-outside',
  'write-home-rc',
  'write-etc',
  'write-hook',
  'edit-git-config',
  'overwrite-mcp-json',
  'touch-state',
  'list-state',
  'read-state-db',
  'remove-state',
  'rename-state',
  'rename-git',
  'remove-git',
  'read-config',
  'tcp-connect',
] as const;

/** The script, as the agent writes it; `sh attack.sh all` attacks, `sh attack.sh` does only allowed work. */
function attackScript(ws: SandboxWorkspace, port: number, sleeps: readonly string[]): string {
  const p = ws.project;
  const tcp = `const s=require("net").connect(${port},"127.0.0.1");s.on("connect",()=>process.exit(0));s.on("error",()=>process.exit(1));setTimeout(()=>process.exit(2),3000)`;
  return `#!/bin/sh
R="${p}/report.txt"
: > "$R"
try() { name=$1; shift; if "$@" > /dev/null 2>&1; then echo "$name=ok" >> "$R"; else echo "$name=refused" >> "$R"; fi; }
try write-root sh -c 'echo fine > "${p}/work/out.txt"'
try read-root grep -q hello "${p}/work/in.txt"
try read-docs grep -q readable "${ws.docs}/readme.txt"
try tmp-scratch sh -c 'echo x > /tmp/scratch && grep -q x /tmp/scratch'
if [ "$1" = all ]; then
  try read-ssh-key grep -q FAKE "${ws.home}/.ssh/id_rsa"
  try list-ssh sh -c 'ls -A "${ws.home}/.ssh" | grep -q .'
  try read-ssh-tilde sh -c 'grep -q FAKE ~/.ssh/id_rsa'
  try read-aws grep -q FAKE "${ws.home}/.aws/credentials"
  try write-outside sh -c 'echo pwned > "${ws.outside}/pwned.txt"'
  try write-home-rc sh -c 'echo pwned >> "${ws.home}/.bashrc"'
  try write-etc sh -c 'echo pwned > /etc/snotra-sandbox-pwned'
  try write-hook sh -c 'echo "#!/bin/sh" > "${p}/.git/hooks/x"'
  try edit-git-config sh -c 'echo "[core] hooksPath = /tmp" >> "${p}/.git/config"'
  try overwrite-mcp-json sh -c 'echo "{}" > "${p}/.mcp.json"'
  try touch-state touch "${ws.state}/pwned"
  try list-state sh -c 'ls -A "${ws.state}" | grep -q .'
  try read-state-db test -s "${ws.state}/snotra.db"
  try remove-state rm -rf "${ws.state}"
  try rename-state mv "${ws.state}" "${p}/state-moved"
  try rename-git sh -c 'mv "${p}/.git" "${p}/git-moved" && mkdir -p "${p}/.git/hooks" && echo "#!/bin/sh" > "${p}/.git/hooks/pre-commit"'
  try remove-git sh -c 'rm -rf "${p}/.git" 2>/dev/null; mkdir -p "${p}/.git/hooks" && echo x > "${p}/.git/hooks/pre-commit"'
  try read-config grep -q stateDir "${ws.config}"
  try tcp-connect "${process.execPath}" -e '${tcp}'
${daemonsScript(p, sleeps)}
fi
echo report-written
`;
}

function report(ws: SandboxWorkspace): Record<string, string> {
  const text = readFileSync(join(ws.project, 'report.txt'), 'utf8');
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => l.split('=') as [string, string]),
  );
}

function steps(script: string, command: string) {
  return [
    {
      respond: {
        kind: 'calls',
        calls: [{ id: 'c1', tool: 'write_file', args: { path: 'attack.sh', content: script } }],
      },
    },
    {
      expect: { kind: 'tool.result', tool: 'write_file' },
      respond: { kind: 'calls', calls: [{ id: 'c2', tool: 'shell', args: { command } }] },
    },
    { expect: { kind: 'tool.result', contains: 'report-written' }, respond: { kind: 'final', text: 'done' } },
  ];
}

async function listener(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { server, port, connections: () => connections };
}

describe('the OS sandbox through the real runtime (allow mode, scripted model)', () => {
  it('refuses every attempt of a script the analyzer cannot see into, and changes nothing outside the writable root', async () => {
    const ws = sandboxWorkspace(['write_file', 'read_file', 'shell']);
    dirs.push(ws.dir);
    const { server, port, connections } = await listener();
    const sleeps = uniqueSleeps(3);
    const gitConfig = readFileSync(join(ws.project, '.git', 'config'), 'utf8');
    const before = {
      home: fingerprint(ws.home),
      outside: fingerprint(ws.outside),
      docs: fingerprint(ws.docs),
      config: readFileSync(ws.config, 'utf8'),
    };
    try {
      const child = startRuntimeChild(ws, steps(attackScript(ws, port, sleeps), 'sh attack.sh all'));
      expect((await child.line('ready')).sandbox).toBe('bubblewrap');
      const done = await child.line('done', 90_000);
      expect(done.outcome, child.stderr()).toMatchObject({ status: 'completed', text: 'done' });
      await child.exited;

      const seen = report(ws);
      for (const name of ALLOWED) expect(seen[name], name).toBe('ok');
      for (const name of ATTACKS) expect(seen[name], name).toBe('refused');
      expect(connections()).toBe(0);

      // Nothing changed outside the writable root, nor in its protected paths.
      expect(fingerprint(ws.home)).toBe(before.home);
      expect(fingerprint(ws.outside)).toBe(before.outside);
      expect(fingerprint(ws.docs)).toBe(before.docs);
      expect(readFileSync(ws.config, 'utf8')).toBe(before.config);
      expect(existsSync('/etc/snotra-sandbox-pwned')).toBe(false);
      expect(existsSync(join(ws.project, '.git', 'hooks', 'x'))).toBe(false);
      expect(existsSync(join(ws.project, '.git', 'hooks', 'pre-commit'))).toBe(false);
      expect(existsSync(join(ws.project, 'git-moved'))).toBe(false);
      expect(existsSync(join(ws.project, 'state-moved'))).toBe(false);
      expect(readFileSync(join(ws.project, '.git', 'config'), 'utf8')).toBe(gitConfig);
      expect(readFileSync(join(ws.project, '.mcp.json'), 'utf8')).toBe('{"servers":{}}\n');
      expect(existsSync(join(ws.state, 'pwned'))).toBe(false);
      expect(existsSync(join(ws.state, 'snotra.db'))).toBe(true);
      // The allowed write landed in the root.
      expect(readFileSync(join(ws.project, 'work', 'out.txt'), 'utf8')).toBe('fine\n');

      // The daemons ran, and none outlived the command (its PID namespace ended with it).
      for (const n of [1, 2, 3]) expect(existsSync(join(ws.project, `daemon-${n}.started`))).toBe(true);
      const gone = await within(5000, async () => {
        for (const s of sleeps) if ((await processesRunning(['sleep', s])).length > 0) return false;
        return true;
      });
      expect(gone).toBe(true);
    } finally {
      server.close();
    }
  }, 120_000);

  it('runs the same script doing only allowed work to success', async () => {
    const ws = sandboxWorkspace(['write_file', 'read_file', 'shell']);
    dirs.push(ws.dir);
    const child = startRuntimeChild(ws, steps(attackScript(ws, 9, uniqueSleeps(3)), 'sh attack.sh'));
    const done = await child.line('done', 90_000);
    expect(done.outcome, child.stderr()).toMatchObject({ status: 'completed', text: 'done' });
    await child.exited;
    expect(report(ws)).toEqual(Object.fromEntries(ALLOWED.map((n) => [n, 'ok'])));
    expect(readFileSync(join(ws.project, 'work', 'out.txt'), 'utf8')).toBe('fine\n');
  }, 120_000);

  it('lets the command reach the network when the envelope grants external risk', async () => {
    const ws = sandboxWorkspace(['write_file', 'read_file', 'shell', 'http_request']);
    dirs.push(ws.dir);
    const { server, port, connections } = await listener();
    try {
      const js = `const s=require("net").connect(${port},"127.0.0.1");s.on("connect",()=>process.exit(0));s.on("error",()=>process.exit(1))`;
      const script = `"${process.execPath}" -e '${js}' && echo report-written\n`;
      const child = startRuntimeChild(ws, steps(script, 'sh attack.sh'));
      const done = await child.line('done', 90_000);
      expect(done.outcome, child.stderr()).toMatchObject({ status: 'completed' });
      await child.exited;
      expect(connections()).toBe(1);
    } finally {
      server.close();
    }
  }, 120_000);
});
