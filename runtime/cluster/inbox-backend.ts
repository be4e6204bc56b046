import type { InboxBackend } from '../../store/index.ts';
import { approvalOf, type ClusterInbox } from './inbox.ts';

/** The cluster's shared Inbox (JetStream KV, CAS on revision) as an {@link InboxBackend}. */
export function clusterInboxBackend(inbox: ClusterInbox): InboxBackend {
  return {
    open: async (a) => approvalOf((await inbox.open(a)).value),
    get: async (id) => {
      const found = await inbox.get(id);
      return found === null ? null : approvalOf(found.value);
    },
    decide: (id, decision, user, now, reason) => inbox.decide(id, decision, user, now, reason),
  };
}
