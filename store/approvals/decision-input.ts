import type { StringScrubber } from '../errors.ts';
import { Id, Timestamp, parseInput } from '../schema.ts';
import { ApprovalDecision, DecisionReason } from './types.ts';

/**
 * Checks a human decision's inputs, the same way for every Inbox backend (the SQLite store and
 * the cluster's shared Inbox): an id, `approved` or `denied`, a user id, a timestamp and an
 * optional reason of 1 to 1,000 characters. Throws `RecordRejectedError` (`invalid_input`)
 * naming `where` and the input, scrubbed of registered secrets.
 */
export function checkDecisionInput(
  where: string,
  scrubber: StringScrubber,
  id: string,
  decision: ApprovalDecision,
  user: string,
  now: number,
  reason: string | undefined,
): void {
  parseInput(Id, id, `${where} id`, scrubber);
  parseInput(ApprovalDecision, decision, `${where} decision`, scrubber);
  parseInput(Id, user, `${where} user`, scrubber);
  parseInput(Timestamp, now, `${where} now`, scrubber);
  if (reason !== undefined) parseInput(DecisionReason, reason, `${where} reason`, scrubber);
}
