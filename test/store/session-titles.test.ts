import { describe, expect, it } from 'vitest';
import { openTemp } from './helpers.ts';

const meta = { agentId: 'assistant', workspace: '/w', surface: 'sidecar' };

describe('session titles', () => {
  it('a session gets its first run’s message as its title when the run claims it, on one line and shortened', () => {
    const { store } = openTemp();
    store.sessions.claim('s-1', 'run-1', { ...meta, firstMessage: '  Plan the\n weekly   summary ' });
    expect(store.sessions.get('s-1')?.title).toBe('Plan the weekly summary');
    store.sessions.claim('s-2', 'run-2', { ...meta, firstMessage: 'x'.repeat(300) });
    expect(store.sessions.get('s-2')?.title).toBe(`${'x'.repeat(79)}…`);
    // An empty message gives no title; the next run's claim gives it one.
    store.sessions.claim('s-3', 'run-3', { ...meta, firstMessage: '   ' });
    expect(store.sessions.get('s-3')?.title).toBeNull();
    store.sessions.release('s-3', 'run-3');
    store.sessions.claim('s-3', 'run-4', { ...meta, firstMessage: 'second try' });
    expect(store.sessions.get('s-3')?.title).toBe('second try');
  });

  it('a human’s title is kept: later runs’ claims and appends never replace it; an unknown session is false', () => {
    const { store } = openTemp();
    store.sessions.create('s-1', meta);
    expect(store.sessions.setTitle('s-1', 'Release notes')).toBe(true);
    store.sessions.claim('s-1', 'run-1', { ...meta, firstMessage: 'write the notes' });
    store.sessions.appendRun({
      sessionId: 's-1',
      runId: 'run-1',
      status: 'completed',
      entries: [{ role: 'user', text: 'write the notes' }],
    });
    expect(store.sessions.get('s-1')?.title).toBe('Release notes');
    expect(store.sessions.setTitle('nope', 'x')).toBe(false);
  });

  it('a title is redacted when stored, whether it came from a message or from a human', () => {
    const secret = 'sk-title-secret-3f9a8b7c6d5e';
    const { store, redactor } = openTemp();
    redactor.registerSecret(secret);
    store.sessions.claim('s-1', 'run-1', { ...meta, firstMessage: `use ${secret} please` });
    expect(store.sessions.get('s-1')?.title).not.toContain(secret);
    store.sessions.setTitle('s-1', `key ${secret}`);
    expect(store.sessions.get('s-1')?.title).not.toContain(secret);
  });

  it('runTitles maps each run that holds or held a session to it, with the title as it is now', () => {
    const { store } = openTemp();
    store.sessions.claim('s-1', 'run-1', { ...meta, firstMessage: 'first' });
    store.sessions.appendRun({ sessionId: 's-1', runId: 'run-1', status: 'completed', entries: [] });
    store.sessions.claim('s-1', 'run-2', { ...meta, firstMessage: 'second' });
    store.sessions.setTitle('s-1', 'Renamed');
    const titles = store.sessions.runTitles();
    expect(titles.get('run-1')).toEqual({ sessionId: 's-1', title: 'Renamed' });
    expect(titles.get('run-2')).toEqual({ sessionId: 's-1', title: 'Renamed' });
    expect(titles.has('run-3')).toBe(false);
  });
});
