// Who throttles a client over its quota (KIP-219). From these versions on, a response carries
// throttle_time_ms and the broker answers at once, muting the connection for that time; the
// client must not send to that broker before it ends (Kafka's NetworkClient.maybeThrottle). For
// older versions the broker delays the answer itself. This is Kafka's
// AbstractResponse.shouldClientThrottle, API by API; an API not listed throttles on the client in
// every version whose answer carries throttle_time_ms.

/** The first version of each API whose clients throttle themselves. */
const clientThrottlesFrom: ReadonlyMap<number, number> = new Map([
  [0, 6], [1, 8], [2, 3], [3, 6], [8, 4], [9, 4], [10, 2], [11, 3], [12, 2], [13, 2], [14, 2], [15, 2], [16, 2],
  [18, 2], [19, 3], [20, 2], [21, 1], [22, 1], [23, 2], [24, 1], [25, 1], [26, 1], [28, 1], [32, 2], [33, 1],
  [35, 1], [36, 1], [37, 1], [42, 1], [43, 1],
]);

/** True when, at this version, the client waits out throttle_time_ms itself (the broker does not delay the answer). */
export function clientThrottles(apiKey: number, apiVersion: number): boolean {
  return apiVersion >= (clientThrottlesFrom.get(apiKey) ?? 0);
}
