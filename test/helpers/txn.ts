// Transaction requests the tests send over and over: FindCoordinator key type 1 and InitProducerId
// for a transactional id, each retried (bounded) while __transaction_state is created and loaded,
// as clients retry.
import { FindCoordinatorApi, InitProducerIdApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import type { WireClient } from "./wire.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const txnRetriable: number[] = [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS];

export interface Coordinator {
  errorCode: number;
  nodeId: number;
  port: number;
}

/** FindCoordinator key type 1 until it names a node (v4: batched keys). */
export async function findTxnCoordinator(c: WireClient, id: string, version = 3): Promise<Coordinator> {
  let r: Coordinator = { errorCode: -1, nodeId: -1, port: -1 };
  for (let i = 0; i < 200; i++) {
    if (version >= 4) {
      const b = await c.request(FindCoordinatorApi, 4, { keyType: 1, coordinatorKeys: [id] });
      r = (b.coordinators as Coordinator[])[0];
    } else r = await c.request(FindCoordinatorApi, version, { key: id, keyType: 1 }) as unknown as Coordinator;
    if (!txnRetriable.includes(r.errorCode)) return r;
    await sleep(50);
  }
  return r;
}

export interface InitAnswer {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

/** InitProducerId for a transactional id (v3+: with the expected id/epoch). */
export async function initTxn(c: WireClient, id: string, version = 4, expected = { producerId: -1n, producerEpoch: -1 }, timeoutMs = 60_000): Promise<InitAnswer> {
  let r: InitAnswer = { errorCode: -1, producerId: -1n, producerEpoch: -1 };
  for (let i = 0; i < 200; i++) {
    r = await c.request(InitProducerIdApi, version, { transactionalId: id, transactionTimeoutMs: timeoutMs, ...expected }) as unknown as InitAnswer;
    if (!txnRetriable.includes(r.errorCode)) return r;
    await sleep(50);
  }
  return r;
}
