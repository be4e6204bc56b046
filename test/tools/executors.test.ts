import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinExecutors } from '../../actors/tools/executors.ts';
import type { PlatformAdapter } from '../../actors/tools/platform.ts';
import { FileWorkerPool } from '../../actors/tools/search/pool.ts';
import { BUILTIN_TOOLS } from '../../policy/builtins.ts';
import { createTestWorkspace, type TestWorkspace } from './support.ts';

let ws: TestWorkspace;
let pool: FileWorkerPool;
beforeAll(() => {
  ws = createTestWorkspace();
  pool = new FileWorkerPool({ maxThreads: 1 });
});
afterAll(async () => {
  await pool.close();
  ws.cleanup();
});

describe('createBuiltinExecutors', () => {
  it('provides an executor for every built-in tool but spawn_agent', () => {
    const executors = createBuiltinExecutors({ pool });
    expect(Object.keys(executors).sort()).toEqual(
      Object.keys(BUILTIN_TOOLS)
        .filter((n) => n !== 'spawn_agent')
        .sort(),
    );
  });

  it('fails shell and git_query clearly without a process runner', async () => {
    const { shell, git_query } = createBuiltinExecutors({ pool });
    const args = { command: 'true' };
    await expect(shell.execute(args, ws.context(ws.decide('shell', args)))).rejects.toMatchObject({
      code: 'process_runner_missing',
    });
    const gitArgs = { args: ['status'] };
    await expect(
      git_query.execute(gitArgs, ws.context(ws.decide('git_query', gitArgs))),
    ).rejects.toMatchObject({
      code: 'process_runner_missing',
    });
  });

  it('refuses a context whose path guard cannot re-check at execution', async () => {
    writeFileSync(join(ws.root, 'a.txt'), 'x');
    const { read_file } = createBuiltinExecutors({ pool });
    const args = { path: 'a.txt' };
    const plain = { checkSensitive: () => null, resolve: ws.guard.resolve };
    await expect(
      read_file.execute(args, ws.context(ws.decide('read_file', args), { paths: plain })),
    ).rejects.toMatchObject({
      code: 'path_guard_unsupported',
    });
  });
});

describe('send_message', () => {
  it('sends through the adapter with the idempotency key', async () => {
    const sent: unknown[] = [];
    const platform: PlatformAdapter = {
      send: async (channel, text, options) => {
        sent.push({ channel, text, key: options.idempotencyKey });
        return { messageId: 'm-1' };
      },
    };
    const { send_message } = createBuiltinExecutors({ pool, platform });
    const args = { channel: 'ops', text: 'hello' };
    expect(await send_message.execute(args, ws.context(ws.decide('send_message', args)))).toEqual({
      channel: 'ops',
      sent: true,
      messageId: 'm-1',
    });
    expect(sent).toEqual([{ channel: 'ops', text: 'hello', key: 'idem-1' }]);
  });

  it('fails with platform_unavailable without an adapter, send_failed when the adapter throws', async () => {
    const args = { channel: 'ops', text: 'hello' };
    const ctx = ws.context(ws.decide('send_message', args));
    await expect(createBuiltinExecutors({ pool }).send_message.execute(args, ctx)).rejects.toMatchObject({
      code: 'platform_unavailable',
    });
    const failing: PlatformAdapter = { send: () => Promise.reject(new Error('rate limited')) };
    await expect(
      createBuiltinExecutors({ pool, platform: failing }).send_message.execute(args, ctx),
    ).rejects.toMatchObject({
      code: 'send_failed',
    });
  });
});

describe('request_directory_access', () => {
  it('returns the request for the runtime and never adds a root', async () => {
    mkdirSync(join(ws.outside, 'wanted'));
    const before = JSON.stringify(ws.roots);
    const { request_directory_access } = createBuiltinExecutors({ pool });
    const args = { path: join(ws.outside, 'wanted'), access: 'read' };
    const result = await request_directory_access.execute(
      args,
      ws.context(ws.decide('request_directory_access', args)),
    );
    expect(result).toEqual({
      kind: 'directory_access_request',
      path: join(ws.outside, 'wanted'),
      access: 'read',
      applied: false,
    });
    expect(JSON.stringify(ws.roots)).toBe(before);
  });

  it('refuses a sensitive path at execution', async () => {
    const { request_directory_access } = createBuiltinExecutors({ pool });
    const args = { path: join(ws.dir, 'state'), access: 'read-write' };
    await expect(
      request_directory_access.execute(args, ws.context(ws.decide('request_directory_access', args))),
    ).rejects.toMatchObject({ code: 'sensitive_path' });
  });
});
