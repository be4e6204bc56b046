// The storage conformance spec (test/support/store-conformance.ts) on the cluster's shared Inbox:
// its JetStream KV bucket on one real nats-server with JetStream (one replica), started once.
import { openBuckets, type ClusterBuckets } from '../../runtime/cluster/buckets.ts';
import { ClusterInbox } from '../../runtime/cluster/inbox.ts';
import { Redactor } from '../../store/index.ts';
import { clusterInboxBackend } from '../../runtime/cluster/inbox-backend.ts';
import { useQueueTestServer } from '../bus/helpers.ts';
import { describeStoreConformance } from '../support/store-conformance.ts';

const server = useQueueTestServer();
let buckets: ClusterBuckets | null = null;

describeStoreConformance('JetStream (the cluster Inbox bucket)', async () => {
  buckets ??= await openBuckets(server.nc(), { replicas: 1, leaseTtlMs: 10_000 });
  return clusterInboxBackend(new ClusterInbox(buckets.inbox, 'node-a', new Redactor()));
});
