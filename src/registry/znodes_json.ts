// The JSON helpers of znodes.ts and znodes_acl.ts: strict UTF-8, no throwing (a decoder gives
// null for anything malformed). Internal to the registry module: mod.ts does not export them.
import { assert } from "../util/mod.ts";
import type { TopicPartition } from "./znodes.ts";

export const utf8 = new TextDecoder("utf-8", { fatal: true });
export const textEncoder = new TextEncoder();
export const int32Min = -(2 ** 31);
export const int32Max = 2 ** 31 - 1;
export const int64Max = (1n << 63n) - 1n;

export function text(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export function parseJson(bytes: Uint8Array): unknown {
  const s = text(bytes);
  if (s === null) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function parseObject(bytes: Uint8Array): Json | null {
  const v = parseJson(bytes);
  return isObject(v) ? v : null;
}

export function jsonBytes(value: unknown): Uint8Array {
  return textEncoder.encode(JSON.stringify(value));
}

export function isInt32(v: unknown): v is number {
  return Number.isInteger(v) && (v as number) >= int32Min && (v as number) <= int32Max;
}

export function int32Array(v: unknown): number[] | null {
  if (!Array.isArray(v) || !v.every(isInt32)) return null;
  return v as number[];
}

/** A partition number given as an object key ("0", "17"). */
export function partitionKey(key: string): number | null {
  if (!/^(0|[1-9]\d{0,9})$/.test(key)) return null;
  const n = Number(key);
  return n <= int32Max ? n : null;
}

export function int32Text(bytes: Uint8Array): number | null {
  const s = text(bytes);
  if (s === null || !/^-?\d{1,10}$/.test(s.trim())) return null;
  const n = Number(s.trim());
  return isInt32(n) ? n : null;
}

export function int64Text(s: unknown): bigint | null {
  if (typeof s !== "string" || !/^-?\d{1,19}$/.test(s.trim())) return null;
  const n = BigInt(s.trim());
  return n <= int64Max && n >= -int64Max - 1n ? n : null;
}

export function topicPartitions(v: unknown): TopicPartition[] | null {
  if (!Array.isArray(v)) return null;
  const out: TopicPartition[] = [];
  for (const item of v) {
    if (!isObject(item) || typeof item.topic !== "string" || !isInt32(item.partition)) return null;
    out.push({ topic: item.topic, partition: item.partition });
  }
  return out;
}

export function checkTopicName(topic: string): void {
  assert(
    topic.length > 0 && !topic.includes("/"),
    `topic name ${JSON.stringify(topic)} validated before use in a znode path`,
  );
}

export const empty = new Uint8Array(0);
