import { errors as natsErrors } from '@nats-io/transport-node';
import { BusError, BusErrorCode } from './errors.ts';

/** Maps a v3 client error of publish/subscribe/flush to a {@link BusError} (`bus_closed`); others pass through. */
export function mapUsageError(err: unknown): unknown {
  if (err instanceof BusError) return err;
  if (err instanceof natsErrors.ClosedConnectionError || err instanceof natsErrors.DrainingConnectionError) {
    return new BusError(BusErrorCode.Closed, 'the bus connection is closed', { cause: err });
  }
  return err;
}

/** Maps a v3 client request error to `bus_no_responders` / `bus_request_timeout` / `bus_closed`. */
export function mapRequestError(err: unknown, subject: string, timeoutMs: number): unknown {
  const cause = err instanceof natsErrors.RequestError && err.cause !== undefined ? err.cause : err;
  if (
    cause instanceof natsErrors.NoRespondersError ||
    (err instanceof natsErrors.RequestError && err.isNoResponders())
  ) {
    return new BusError(BusErrorCode.NoResponders, `no responder is subscribed to ${subject}`, {
      cause: err,
    });
  }
  if (cause instanceof natsErrors.TimeoutError) {
    return new BusError(BusErrorCode.RequestTimeout, `no reply on ${subject} within ${timeoutMs} ms`, {
      cause: err,
    });
  }
  return mapUsageError(err);
}
