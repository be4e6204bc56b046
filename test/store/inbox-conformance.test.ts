// The storage conformance spec (test/support/store-conformance.ts) on the SQLite store: a real file.
import { sqliteInboxBackend } from '../../store/index.ts';
import { describeStoreConformance } from '../support/store-conformance.ts';
import { openTemp } from './helpers.ts';

describeStoreConformance('SQLite (a store file)', () => sqliteInboxBackend(openTemp().store.approvals));
