import type { ClaimOutcome } from '../../actors/run/execute.ts';
import type { ClaimBackend, ClaimState } from '../../store/index.ts';
import type { ClusterClaims } from './claims.ts';

function stateOf(outcome: ClaimOutcome): ClaimState {
  // A claim that could not be recorded, or was refused, is never run: an error naming why.
  if (outcome.state === 'unavailable') throw new Error(outcome.message);
  if (outcome.state === 'taken') return { state: 'taken', attempt: outcome.attempt };
  return outcome;
}

/** The cluster's claims bucket (JetStream KV, `create` then CAS on revision) as a {@link ClaimBackend}. */
export function clusterClaimBackend(claims: ClusterClaims): ClaimBackend {
  return {
    claim: async (key, call) => stateOf(await claims.claim(key, call)),
    retake: async (key, attempt) => stateOf(await claims.retake(key, attempt)),
    settle: (key, status, stored) => claims.settle(key, status, stored),
    get: async (key) => {
      const found = await claims.get(key);
      if (found === null) return null;
      return {
        status: found.status === 'started' ? 'unfinished' : found.status,
        attempt: found.attempt,
        stored: found.stored,
      };
    },
  };
}
