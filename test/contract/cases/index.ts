import { CONTRACT_SECRET, type GroupFixture } from '../fixture.ts';
import type { ContractCase } from './case.ts';
import { case01, case02, case03 } from './modes.ts';
import { case04, case05 } from './metadata-and-roots.ts';
import { case06 } from './delegation.ts';
import { case07, case08, case09 } from './approvals.ts';
import { case10, case11, case12 } from './edges.ts';

export type { CaseContext, ContractCase, Group } from './case.ts';

/** The seed's §13 matrix, in its order. */
export const CASES: readonly ContractCase[] = [
  case01,
  case02,
  case03,
  case04,
  case05,
  case06,
  case07,
  case08,
  case09,
  case10,
  case11,
  case12,
];

/** The config every group shares: extension tools without valid metadata, the hit server, the env secret. */
export function sharedConfig(fx: GroupFixture): Record<string, unknown> {
  return {
    tools: {
      ext_unannotated: { source: 'extension' },
      ext_invalid: { source: 'extension', risk: 'superuser' },
    },
    http: { allowPrivateHosts: [fx.http.hostPort] },
    secrets: { backend: 'env' },
  };
}

export const SHARED_ENV: Readonly<Record<string, string>> = { SNOTRA_SECRET_API_TOKEN: CONTRACT_SECRET };
