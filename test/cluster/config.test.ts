import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { runtimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

describe('cluster mode in config', () => {
  it('node.id without bus.url is refused before anything starts, naming both keys', async () => {
    const fx = runtimeFixture({ node: { id: 'node-a' } });
    try {
      await expect(fx.start(new ScriptedModel({}))).rejects.toMatchObject({
        code: 'invalid_config',
        problems: [expect.stringContaining('node.id: cluster mode needs bus.url')],
      });
    } finally {
      fx.cleanup();
    }
  });

  it('a malformed node id is a config error naming node.id; look-alikes that are fine parse', () => {
    for (const bad of ['', 'a b', 'a.b', 'x'.repeat(65), 'näme', 'a/b']) {
      expect(() => parseConfig(JSON.stringify({ node: { id: bad } }), '/tmp/c.json', '/tmp'), bad).toThrow(
        /node\.id/,
      );
    }
    for (const ok of ['a', 'node-a', 'NODE_7', 'x'.repeat(64)]) {
      expect(parseConfig(JSON.stringify({ node: { id: ok } }), '/tmp/c.json', '/tmp').config.node?.id).toBe(
        ok,
      );
    }
    expect(() =>
      parseConfig(JSON.stringify({ node: { id: 'a', leaseTtlMs: 10 } }), '/tmp/c.json', '/tmp'),
    ).toThrow(/node\.leaseTtlMs/);
  });

  it('without node.id the runtime is a single node: no cluster, the embedded server', async () => {
    const fx = runtimeFixture({});
    const rt = await fx.start(new ScriptedModel({}));
    try {
      expect(runtimeInternals(rt).cluster).toBeNull();
      expect(runtimeInternals(rt).loaded.config.node).toBeUndefined();
    } finally {
      await rt.stop();
      fx.cleanup();
    }
  });
});
