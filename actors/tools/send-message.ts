/** `send_message {channel, text}`: through the injected platform adapter. */
import { ToolErrorCode } from './codes.ts';
import { throwIfCancelled } from './paths.ts';
import type { PlatformAdapter } from './platform.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from './types.ts';

/** What `send_message` returns. */
export interface SendMessageResult {
  readonly channel: string;
  readonly sent: true;
  readonly messageId: string | null;
}

/**
 * Creates the `send_message` executor. Guarantees: without an adapter every call fails with
 * `platform_unavailable`; the call's idempotency key and signal are passed to the adapter; an
 * adapter failure becomes `send_failed` (its message is redacted downstream like any output).
 */
export function createSendMessageExecutor(adapter: PlatformAdapter | undefined): ToolExecutor {
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<SendMessageResult> {
      if (adapter === undefined) {
        throw new ToolError(ToolErrorCode.platformUnavailable, 'no messaging platform is configured');
      }
      throwIfCancelled(ctx.signal);
      const channel = String(args.channel);
      try {
        const sent = await adapter.send(channel, String(args.text), {
          idempotencyKey: ctx.idempotencyKey,
          signal: ctx.signal,
        });
        return { channel, sent: true, messageId: sent.messageId ?? null };
      } catch (error) {
        if (error instanceof ToolError) throw error;
        const message = error instanceof Error ? error.message : String(error);
        throw new ToolError(ToolErrorCode.sendFailed, `the platform refused the message: ${message}`);
      }
    },
  };
}
