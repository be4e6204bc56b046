// The storage conformance specs (test/support/store-conformance.ts, claims-conformance.ts,
// run-records-conformance.ts) on the cluster's JetStream KV buckets (the shared Inbox, the claims,
// the run records), on one real nats-server with JetStream (one replica), started once for the file.
import { openBuckets, type ClusterBuckets } from '../../runtime/cluster/buckets.ts';
import { clusterClaimBackend } from '../../runtime/cluster/claim-backend.ts';
import { ClusterClaims } from '../../runtime/cluster/claims.ts';
import { ClusterInbox } from '../../runtime/cluster/inbox.ts';
import { clusterInboxBackend } from '../../runtime/cluster/inbox-backend.ts';
import { clusterRunRecordBackend } from '../../runtime/cluster/run-record-backend.ts';
import { RunRecords } from '../../runtime/cluster/run-records.ts';
import { Redactor } from '../../store/index.ts';
import { useQueueTestServer } from '../bus/helpers.ts';
import { describeClaimsConformance } from '../support/claims-conformance.ts';
import { describeRunRecordsConformance } from '../support/run-records-conformance.ts';
import { describeStoreConformance } from '../support/store-conformance.ts';

const server = useQueueTestServer();
let buckets: ClusterBuckets | null = null;
const open = async (): Promise<ClusterBuckets> =>
  (buckets ??= await openBuckets(server.nc(), { replicas: 1, leaseTtlMs: 10_000 }));

describeStoreConformance('JetStream (the cluster Inbox bucket)', async () =>
  clusterInboxBackend(new ClusterInbox((await open()).inbox, 'node-a', new Redactor())),
);

describeClaimsConformance('JetStream (the cluster claims bucket)', async () => ({
  backend: clusterClaimBackend(
    new ClusterClaims((await open()).claims, 'node-a', Date.now, server.logger, 20_000, () => false),
  ),
  // A node that dies mid-call leaves its claim started: nothing to do.
  abandon: async () => {},
}));

describeRunRecordsConformance('JetStream (the cluster run records bucket)', async () =>
  clusterRunRecordBackend(new RunRecords((await open()).runs, new Redactor()), 'node-a'),
);
