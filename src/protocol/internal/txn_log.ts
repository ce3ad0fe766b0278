// The records of __transaction_state, as Kafka writes them (Kafka's TransactionLog, from the
// TransactionLogKey / TransactionLogValue definitions). Key and value each open with an int16
// version:
//
//   TransactionLogKey    v0  transactionalId string
//   TransactionLogValue  v0  producerId int64, producerEpoch int16, transactionTimeoutMs int32,
//                            transactionStatus int8, transactionPartitions [topic string,
//                            partitionIds []int32]? (null for Empty), transactionLastUpdateTimestampMs
//                            int64, transactionStartTimestampMs int64
//                        v1  the same fields, flexible (compact lengths, tagged-field sections)
//
// Kafka 3.8 writes key v0 and value v0 (the highest non-flexible version) and reads v0 and v1; a
// key of any other version is skipped on load ("unknown"), as Kafka's UnknownKey is. A null value
// (a tombstone) removes the transactional id; callers handle it before decoding a value. Strings
// are int16-length strings in v0, so a transactional id or topic longer than 32767 UTF-8 bytes
// cannot be written: callers bound them first. Decoders never throw: malformed bytes, an unknown
// value version or an unknown status id give { kind: "invalid", error }.

import { Reader } from "../../util/mod.ts";
import type { Struct } from "../codec.ts";
import { message } from "../schema.ts";
import { decodeBody, encodeVersioned, noApiKey, readVersion } from "./versioned.ts";

export const TransactionLogKeySchema = message(noApiKey, "TransactionLogKey", "0", null, `
  transactionalId                   string
`);

export const TransactionLogValueSchema = message(noApiKey, "TransactionLogValue", "0-1", "1+", `
  producerId                        int64
  producerEpoch                     int16
  transactionTimeoutMs              int32
  transactionStatus                 int8
  transactionPartitions             []      nullable
    topic                           string
    partitionIds                    []int32
  transactionLastUpdateTimestampMs  int64
  transactionStartTimestampMs       int64
`);

/** Both record formats of __transaction_state, for tests and tools. */
export const txnLogRecordSchemas = [TransactionLogKeySchema, TransactionLogValueSchema] as const;

/** The versions Kafka 3.8 writes. */
export const transactionLogKeyVersion = 0;
export const transactionLogValueVersion = 0;

export interface TxnLogPartitions {
  topic: string;
  partitionIds: number[];
}

export interface TransactionLogValue {
  producerId: bigint;
  producerEpoch: number;
  transactionTimeoutMs: number;
  /** Kafka's TransactionState id: 0 Empty ... 7 PrepareEpochFence (coordinator/txn_metadata.ts). */
  transactionStatus: number;
  /** Null when the state is Empty (Kafka writes null then, and ignores what it reads). */
  transactionPartitions: TxnLogPartitions[] | null;
  transactionLastUpdateTimestampMs: bigint;
  transactionStartTimestampMs: bigint;
}

export type TransactionLogKeyRecord =
  | { kind: "txn"; version: number; transactionalId: string }
  | { kind: "unknown"; version: number }
  | { kind: "invalid"; error: string };

export type TransactionLogValueRecord =
  | ({ kind: "txn"; version: number } & TransactionLogValue)
  | { kind: "invalid"; error: string };

/** Status ids Kafka knows (TransactionState.fromId); anything else is not a record Kafka wrote. */
const txnStatusIdMax = 7;

export function encodeTransactionLogKey(transactionalId: string, version = transactionLogKeyVersion): Uint8Array {
  return encodeVersioned(TransactionLogKeySchema, version, { transactionalId });
}

export function encodeTransactionLogValue(value: TransactionLogValue, version = transactionLogValueVersion): Uint8Array {
  return encodeVersioned(TransactionLogValueSchema, version, { ...value } as unknown as Struct);
}

/** What a __transaction_state key is; never throws. */
export function decodeTransactionLogKey(bytes: Uint8Array): TransactionLogKeyRecord {
  const r = new Reader(bytes);
  const version = readVersion(r);
  if (version === null) return { kind: "invalid", error: `key of ${bytes.length} bytes has no version` };
  if (version !== transactionLogKeyVersion) return { kind: "unknown", version };
  const d = decodeBody(TransactionLogKeySchema, version, r, false);
  if ("error" in d) return { kind: "invalid", error: d.error };
  return { kind: "txn", version, transactionalId: d.value.transactionalId as string };
}

/** A (non-null) __transaction_state value; never throws. */
export function decodeTransactionLogValue(bytes: Uint8Array): TransactionLogValueRecord {
  const r = new Reader(bytes);
  const version = readVersion(r);
  if (version === null) return { kind: "invalid", error: `value of ${bytes.length} bytes has no version` };
  const d = decodeBody(TransactionLogValueSchema, version, r, false);
  if ("error" in d) return { kind: "invalid", error: d.error };
  const v = d.value as unknown as TransactionLogValue;
  if (v.transactionStatus < 0 || v.transactionStatus > txnStatusIdMax) {
    return { kind: "invalid", error: `unknown transaction status ${v.transactionStatus}` };
  }
  return { kind: "txn", version, ...v };
}
