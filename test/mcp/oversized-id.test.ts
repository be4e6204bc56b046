/** Which request an oversized message answers, from its first and last bytes only. */
import { describe, expect, it } from 'vitest';
import { oversizedMessageId } from '../../actors/mcp/oversized.ts';

const b = (s: string): Buffer => Buffer.from(s);

describe('oversizedMessageId', () => {
  it.each([
    ['id first', '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxx', 'xxx"}]}}', 7],
    ['id before jsonrpc', '{"id":"a-1","jsonrpc":"2.0","result":{"x":"', 'yyy"}}', 'a-1'],
    [
      'id last (SDK order)',
      '{"result":{"content":[{"type":"text","text":"x',
      'xxxx"}]},"jsonrpc":"2.0","id":12}',
      12,
    ],
    ['id before a trailing jsonrpc', '{"result":{"a":"', 'b"},"id":3,"jsonrpc":"2.0"}\r', 3],
  ])('%s', (_name, head, tail, id) => {
    expect(oversizedMessageId(b(head), b(tail))).toBe(id);
  });

  it.each([
    ['an id nested in the result is not the answer id', '{"result":{"id":5,"text":"', 'zz"}}'],
    [
      'a notification has none',
      '{"method":"notifications/message","params":{"data":"',
      'x"},"jsonrpc":"2.0"}',
    ],
    ['a nested id at the end of the result', '{"result":{"text":"', 'x","id":9}}'],
  ])('%s', (_name, head, tail) => {
    expect(oversizedMessageId(b(head), b(tail))).toBeNull();
  });
});
