// Frame generator for the wire fuzzer (test/fuzz/wire.test.ts, `npm run fuzz`). Everything here is
// a pure function of a seeded PRNG, so a seed and a session number give the same bytes again.
//
// A request is first built valid: random values for every field of the API's schema at the chosen
// version (src/protocol/api/*.ts), biased towards the broker's real state (pool topics and groups,
// small partition numbers, short waits) so that handlers run deep, then encoded by a walker that
// mirrors protocol/codec.ts but remembers where every length prefix lies. A hostile variant then
// truncates it, flips bits, overwrites bytes, splices two requests, rewrites one length prefix to a
// huge, negative or null value, breaks the header, or lies in the frame's size. Produce carries
// record batches from batchVariant(): valid ones (every codec), and ones with a valid CRC over
// broken records, a bad CRC, compressed garbage, lying header fields, extreme timestamps, a
// decompression bomb.
import { gzipSync } from "node:zlib";
import { apiSchemas } from "../../src/protocol/api/mod.ts";
import { decode, type Struct } from "../../src/protocol/codec.ts";
import { compress } from "../../src/protocol/compression.ts";
import { readRequestHeaderPrefix, readRequestHeaderRest, writeRequestHeader } from "../../src/protocol/headers.ts";
import { defaultOf, type Field, inRange, type MessageSchema } from "../../src/protocol/schema.ts";
import type { ApiSchema } from "../../src/protocol/schema.ts";
import { bytesEqual, Reader, utf8Bytes, Writer } from "../../src/util/bytes.ts";
import { crc32c } from "../../src/util/crc32c.ts";

// ---- PRNG ---------------------------------------------------------------------------------------

/** mulberry32: small, fast, good enough for fuzzing, and the same on every runtime. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  u32(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** 0 <= n < max */
  int(max: number): number {
    return max <= 1 ? 0 : Math.floor((this.u32() / 4294967296) * max);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.u32() / 4294967296 < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }
  /** Weighted choice: [[weight, value], ...]. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    let total = 0;
    for (const [w] of choices) total += w;
    let x = (this.u32() / 4294967296) * total;
    for (const [w, v] of choices) {
      if (x < w) return v;
      x -= w;
    }
    return choices[choices.length - 1][1];
  }
}

/** A seed for one stream (session k of run seed s): a 32-bit mix, so neighbours are unrelated. */
export function streamSeed(seed: number, stream: number): number {
  let h = (seed ^ Math.imul(stream + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

// ---- the broker's state the generator aims at ----------------------------------------------------

export interface Pools {
  /** Topics created before fuzzing; the fuzzer never sends a valid DeleteTopics for them. */
  topics: string[];
  /** Names a valid CreateTopics may create (and DeleteTopics delete): a bounded set. */
  spareTopics: string[];
  groups: string[];
  brokerId: number;
}

export function defaultPools(tag: string): Pools {
  return {
    topics: [`fz-a-${tag}`, `fz-b-${tag}`, `fz-compact-${tag}`, `fz-lat-${tag}`],
    spareTopics: Array.from({ length: 12 }, (_, i) => `fz-spare-${i}-${tag}`),
    groups: [`fz-g1-${tag}`, `fz-g2-${tag}`, `fz-g3-${tag}`],
    brokerId: 0,
  };
}

// ---- values -------------------------------------------------------------------------------------

const int8s = [0, 1, -1, 2, 3, 127, -128, 4, 5, 8];
const int16s = [0, 1, -1, 2, 3, 32767, -32768, 255, 256, 1000, -2];
const int32s = [0, 1, -1, 2, 3, 7, 2147483647, -2147483648, 65535, 65536, 1 << 20, 1 << 24, 100_000, -2, 1000];
const int64s = [0n, 1n, -1n, -2n, -3n, 2n, 10n, 1000n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, 2n ** 31n, 1_700_000_000_000n];
const topicConfigNames = [
  "cleanup.policy", "retention.ms", "retention.bytes", "segment.bytes", "segment.ms", "max.message.bytes",
  "message.timestamp.type", "message.timestamp.difference.max.ms", "min.insync.replicas", "compression.type",
  "min.compaction.lag.ms", "delete.retention.ms", "unclean.leader.election.enable", "flush.messages",
  "index.interval.bytes", "segment.index.bytes", "message.format.version", "file.delete.delay.ms",
];
const configValues = ["", "0", "1", "-1", "delete", "compact", "compact,delete", "LogAppendTime", "CreateTime", "gzip",
  "zstd", "producer", "true", "false", "9223372036854775807", "-9223372036854775808", "1e3", "NaN", "2147483648", "abc"];

export interface GenContext {
  rng: Rng;
  pools: Pools;
  apiKey: number;
  version: number;
  /** Control APIs in the main phase: a controller epoch the broker must refuse (see wire.test.ts). */
  staleControl: boolean;
  /** Bound on array lengths (nested arrays get smaller). */
  depth: number;
  /** Null elements in arrays of strings or bytes, which no valid request has (default: sometimes). */
  nullElements?: boolean;
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

function randomString(ctx: GenContext): string {
  const { rng } = ctx;
  const len = rng.weighted([[5, 0], [30, rng.range(1, 12)], [8, rng.range(13, 64)], [3, rng.range(200, 260)], [1, rng.range(1000, 4000)]] as const);
  const kind = rng.int(4);
  const codes = new Array<number>(len);
  for (let i = 0; i < len; i++) {
    if (kind === 0) codes[i] = alnum.charCodeAt(rng.int(alnum.length));
    else if (kind === 1) codes[i] = rng.range(0x20, 0x7e);
    else if (kind === 2) codes[i] = rng.int(0x80); // control characters too
    else codes[i] = rng.pick([0x41, 0xe9, 0x4e2d, 0xd83d, 0xde00, 0xfffd, 0x2e, 0x2f, 0x0, 0x20]);
  }
  const s = String.fromCharCode(...codes);
  // No path separators in names a control request could turn into a directory (see wire.test.ts).
  return s.replaceAll("/", "_").replaceAll("\\", "_").replaceAll("\0", "_");
}

function topicName(ctx: GenContext): string {
  const { rng, pools } = ctx;
  return rng.weighted([
    [60, () => rng.pick(pools.topics)],
    [10, () => rng.pick(pools.spareTopics)],
    [3, () => "__consumer_offsets"],
    [27, () => randomString(ctx)],
  ] as const)();
}

function groupName(ctx: GenContext): string {
  const { rng, pools } = ctx;
  // JoinGroup/SyncGroup mostly go to fresh groups, which complete at once (initial delay 0),
  // instead of waiting on a pool group's earlier members.
  const fresh = ctx.apiKey === 11 || ctx.apiKey === 14 ? 70 : 25;
  return rng.weighted([[100 - fresh, () => rng.pick(pools.groups)], [fresh, () => `fzg-${rng.u32().toString(36)}`], [5, () => randomString(ctx)]] as const)();
}

function stringValue(f: Field, ctx: GenContext, parent: string): string {
  const { rng } = ctx;
  const n = f.name;
  if (parent === "topicNames" || n === "topic" || n === "topicName" || (n === "name" && /topic|creatable|partitionData|responses/i.test(parent))) return topicName(ctx);
  if (n === "name" && /topics|topicData/i.test(parent)) return topicName(ctx);
  if (n === "groupId" || parent === "groups" || parent === "groupsNames" || parent === "coordinatorKeys") return groupName(ctx);
  if (n === "resourceName") return rng.weighted([[50, () => topicName(ctx)], [15, () => String(ctx.pools.brokerId)], [10, () => ""], [25, () => randomString(ctx)]] as const)();
  if (n === "name" && /configs/i.test(parent)) return rng.chance(0.7) ? rng.pick(topicConfigNames) : randomString(ctx);
  if (n === "key" || parent === "configurationKeys") return rng.chance(0.7) ? rng.pick(topicConfigNames) : randomString(ctx);
  if (n === "value") return rng.chance(0.7) ? rng.pick(configValues) : randomString(ctx);
  if (n === "protocolType") return rng.chance(0.7) ? "consumer" : randomString(ctx);
  if (n === "protocolName" || n === "name" && parent === "protocols") return rng.chance(0.6) ? rng.pick(["range", "roundrobin", "cooperative-sticky"]) : randomString(ctx);
  if (n === "memberId" || n === "groupInstanceId") return rng.chance(0.5) ? "" : randomString(ctx);
  if (parent === "statesFilter" || parent === "typesFilter") {
    return rng.chance(0.6) ? rng.pick(["Stable", "Empty", "Dead", "PreparingRebalance", "CompletingRebalance", "consumer", "classic"]) : randomString(ctx);
  }
  if (n === "host") return rng.chance(0.6) ? "127.0.0.1" : randomString(ctx);
  return randomString(ctx);
}

function intValue(f: Field, ctx: GenContext, parent: string): number {
  const { rng } = ctx;
  const n = f.name;
  const table = f.type === "int8" ? int8s : f.type === "int16" ? int16s : f.type === "uint16" ? [0, 1, 65535, 9092, 256] : int32s;
  const wild = () => {
    const v = rng.chance(0.5) ? rng.pick(table) : (rng.u32() | 0);
    if (f.type === "int8") return (v << 24) >> 24;
    if (f.type === "int16") return (v << 16) >> 16;
    if (f.type === "uint16") return v & 0xffff;
    return v;
  };
  // Fields whose value decides how long the broker waits: short, or the extremes now and then.
  if (/^(timeoutMs|maxWaitMs|rebalanceTimeoutMs)$/.test(n)) return rng.chance(0.92) ? rng.pick([0, 1, 5, 20, 100, 500]) : rng.pick([-1, -2147483648, 2147483647, 60_001]);
  if (n === "sessionTimeoutMs") return rng.chance(0.9) ? rng.pick([6000, 10000, 1, 0]) : wild();
  if (n === "controllerEpoch" && ctx.staleControl) return -1 - rng.int(1000);
  if (/^(partitionIndex|partition|index|partitionId)$/.test(n) || parent === "partitions" || parent === "partitionIndexes") {
    return rng.chance(0.85) ? rng.range(0, 3) : wild();
  }
  if (/^(numPartitions|count)$/.test(n)) return rng.chance(0.85) ? rng.pick([-1, 1, 2, 3, 4]) : rng.pick([0, -2, -2147483648, 2147483647, 10_001, 1 << 30]);
  if (n === "replicationFactor") return rng.chance(0.85) ? rng.pick([-1, 1]) : wild();
  if (/^(brokerId|controllerId|leader|nodeId|leaderId|replicaId)$/.test(n) || /replicas|isr|brokerIds|Replicas|Nodes/.test(parent)) {
    return rng.chance(0.8) ? rng.pick([0, 0, 1, -1, 2]) : wild();
  }
  // acks=0 is rare: a produce that fails with it closes the connection, as Kafka does.
  if (n === "acks") return rng.weighted([[40, -1], [40, 1], [6, 0], [2, 2], [1, -2], [1, 32767]] as const);
  if (n === "isolationLevel") return rng.pick([0, 1, 0, 1, 2, -1]);
  if (n === "resourceType") return rng.pick([2, 2, 2, 4, 4, 0, 1, 3, 8, -1, 127]);
  if (n === "configOperation") return rng.pick([0, 1, 2, 3, 4, -1]);
  if (/^(minBytes)$/.test(n)) return rng.chance(0.9) ? rng.pick([0, 1, -1]) : wild();
  if (/maxBytes|MaxBytes/.test(n)) return rng.chance(0.7) ? rng.pick([1 << 20, 1024, 0, 1]) : wild();
  if (/[Ee]poch$/.test(n) || n === "generationId") return rng.chance(0.6) ? rng.pick([-1, 0, 1]) : wild();
  return wild();
}

function int64Value(f: Field, ctx: GenContext): bigint {
  const { rng } = ctx;
  if (/[Oo]ffset$|^timestamp$/.test(f.name) && rng.chance(0.7)) return rng.pick([0n, 1n, 5n, -1n, -2n, -3n, 100n]);
  if (rng.chance(0.6)) return rng.pick(int64s);
  return BigInt.asIntN(64, (BigInt(rng.u32()) << 32n) | BigInt(rng.u32()));
}

function arrayLength(ctx: GenContext, primitive: boolean): number {
  const { rng } = ctx;
  if (ctx.depth >= 3) return rng.weighted([[3, 0], [5, 1], [1, 2]] as const);
  return rng.weighted([[2, 0], [8, 1], [4, 2], [2, 3], [1, primitive ? rng.range(4, 40) : rng.range(4, 8)]] as const);
}

function fieldValue(f: Field, ctx: GenContext, parent: string): unknown {
  const { rng } = ctx;
  const nullable = inRange(f.nullable, ctx.version);
  if (nullable && rng.chance(0.12)) return null;
  if (f.array) {
    const n = arrayLength(ctx, f.type !== "struct");
    const out: unknown[] = [];
    ctx.depth++;
    for (let i = 0; i < n; i++) {
      // A null element in an array of strings or bytes: the wire can carry it (length -1) even
      // where no version makes the elements nullable.
      if (f.type === "struct") out.push(structValue(f.fields, ctx, f.name));
      else if ((f.type === "string" || f.type === "bytes") && ctx.nullElements !== false && rng.chance(0.03)) out.push(null);
      else out.push(primitiveValue(f, ctx, f.name));
    }
    ctx.depth--;
    return out;
  }
  if (f.type === "struct") {
    ctx.depth++;
    const s = structValue(f.fields, ctx, f.name);
    ctx.depth--;
    return s;
  }
  return primitiveValue(f, ctx, parent);
}

function primitiveValue(f: Field, ctx: GenContext, parent: string): unknown {
  const { rng } = ctx;
  switch (f.type) {
    case "int8":
    case "int16":
    case "int32":
    case "uint16":
      return intValue(f, ctx, parent);
    case "int64":
      return int64Value(f, ctx);
    case "float64":
      return rng.pick([0, 1, -1, NaN, Infinity, -Infinity, 1e308, 5e-324, 0.5]);
    case "bool":
      return rng.chance(0.5);
    case "uuid":
      return rng.chance(0.6) ? new Uint8Array(16) : rng.bytes(16);
    case "string": {
      const s = stringValue(f, ctx, parent);
      return utf8Bytes(s).length > 0x7fff ? s.slice(0, 1000) : s;
    }
    case "bytes":
      return rng.bytes(rng.weighted([[3, 0], [6, rng.range(1, 40)], [1, rng.range(100, 2000)]] as const));
    case "records":
      return recordsValue(ctx);
    default:
      throw new Error(`type ${f.type}`);
  }
}

function structValue(fields: Field[], ctx: GenContext, parent: string): Struct {
  const out: Struct = {};
  for (const f of fields) {
    if (!inRange(f.versions, ctx.version)) continue;
    // Tagged fields: mostly left at their default (absent on the wire).
    if (f.tag !== null && ctx.rng.chance(0.7)) out[f.name] = defaultOf(f);
    else out[f.name] = fieldValue(f, ctx, parent);
  }
  return out;
}

/** A valid random request body for one API version. */
export function randomRequest(api: ApiSchema, version: number, ctx: GenContext): Struct {
  return structValue(api.request.fields, { ...ctx, apiKey: api.apiKey, version, depth: 0 }, api.request.name);
}

// ---- encoding with known length positions ------------------------------------------------------

/** One length prefix in an encoded body: where, how wide, and what it counted. */
export interface LengthSite {
  pos: number;
  kind: "i16" | "i32" | "uvarint";
}

/**
 * Encodes like protocol/codec.ts (the fuzz test checks the bytes are identical), recording every
 * length prefix; `override` replaces the raw value written at one site (for a uvarint the raw
 * value, N+1 for N bytes, 0 for null).
 */
export function encodeBody(schema: MessageSchema, version: number, s: Struct, override?: { site: number; raw: number }): { bytes: Uint8Array; sites: LengthSite[] } {
  const w = new Writer(256);
  const sites: LengthSite[] = [];
  const flexibleAll = version >= schema.flexibleFrom;
  const length = (n: number, flexible: boolean, wide: boolean) => {
    const kind = flexible ? "uvarint" : wide ? "i32" : "i16";
    const i = sites.length;
    sites.push({ pos: w.pos, kind });
    let raw = flexible ? n + 1 : n;
    if (override !== undefined && override.site === i) raw = override.raw;
    if (kind === "uvarint") w.uvarint(raw >>> 0);
    else if (kind === "i32") w.int32(raw | 0);
    else w.int16((raw << 16) >> 16);
  };
  const prim = (f: Field, v: unknown, flexible: boolean) => {
    switch (f.type) {
      case "int8":
        return void w.int8(v as number);
      case "int16":
        return void w.int16(v as number);
      case "int32":
        return void w.int32(v as number);
      case "int64":
        return void w.int64(typeof v === "bigint" ? v : BigInt(v as number));
      case "uint16":
        return void w.uint16(v as number);
      case "float64":
        return void w.float64(v as number);
      case "bool":
        return void w.bool(v as boolean);
      case "uuid":
        return void w.bytes(v as Uint8Array);
      case "string": {
        if (v === null) return length(-1, flexible, false);
        const b = utf8Bytes(v as string);
        length(b.length, flexible, false);
        return void w.bytes(b);
      }
      case "bytes":
      case "records": {
        if (v === null) return length(-1, flexible, true);
        length((v as Uint8Array).length, flexible, true);
        return void w.bytes(v as Uint8Array);
      }
    }
  };
  const value = (f: Field, v: unknown, flexible: boolean): void => {
    if (v === undefined) v = defaultOf(f);
    if (!f.array && f.type === "struct") return struct(f.fields, v as Struct, flexible);
    if (!f.array) return prim(f, v, flexible);
    if (v === null) return length(-1, flexible, true);
    const items = v as unknown[];
    length(items.length, flexible, true);
    for (const it of items) f.type === "struct" ? struct(f.fields, it as Struct, flexible) : prim(f, it, flexible);
  };
  const struct = (fields: Field[], s: Struct, flexible: boolean): void => {
    const tagged: Field[] = [];
    for (const f of fields) {
      if (!inRange(f.versions, version)) continue;
      if (f.tag !== null) {
        if (flexible && !isDefault(f, s[f.name])) tagged.push(f);
        continue;
      }
      value(f, s[f.name], flexible);
    }
    if (!flexible) return;
    tagged.sort((a, b) => (a.tag as number) - (b.tag as number));
    w.uvarint(tagged.length);
    for (const f of tagged) {
      // The tagged value is written in place, then its size inserted before it.
      w.uvarint(f.tag as number);
      const sizeAt = w.pos;
      const siteCount = sites.length;
      value(f, s[f.name], true);
      const body = w.finish().slice(sizeAt);
      w.pos = sizeAt;
      const sw = new Writer(8).uvarint(body.length).finish();
      w.bytes(sw).bytes(body);
      for (let i = siteCount; i < sites.length; i++) sites[i].pos += sw.length;
    }
  };
  const isDefault = (f: Field, v: unknown): boolean => {
    const d = f.defaultValue;
    if (v === undefined || v === d) return true;
    if (Array.isArray(v)) return v.length === 0 && Array.isArray(d);
    if (v instanceof Uint8Array) return d instanceof Uint8Array && bytesEqual(v, d);
    if (f.type === "struct" && !f.array && v !== null && typeof v === "object") {
      return f.fields.every((c) => !inRange(c.versions, version) || isDefault(c, (v as Struct)[c.name]));
    }
    return false;
  };
  struct(schema.fields, s, flexibleAll);
  return { bytes: w.finish().slice(), sites };
}

/** Request header bytes (v1, or v2 for flexible versions). */
export function encodeHeader(apiKey: number, version: number, correlationId: number, flexible: boolean, clientId: string | null = "fuzz"): Uint8Array {
  const w = new Writer(32);
  writeRequestHeader(w, { apiKey, apiVersion: version, correlationId, clientId }, flexible);
  return w.finish().slice();
}

export function withSize(payload: Uint8Array, size = payload.length): Uint8Array {
  const out = new Uint8Array(4 + payload.length);
  new DataView(out.buffer).setInt32(0, size);
  out.set(payload, 4);
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** What the broker's dispatcher would decode from a frame payload: null when it closes. */
export function decodeAsBroker(payload: Uint8Array, advertised: Map<number, { min: number; max: number }>): { apiKey: number; version: number; body: Struct } | null {
  const r = new Reader(payload);
  const h = readRequestHeaderPrefix(r);
  const range = advertised.get(h.apiKey);
  const api = schemaByKey.get(h.apiKey);
  if (!r.ok || range === undefined || api === undefined || h.apiVersion < range.min || h.apiVersion > range.max) return null;
  const flexible = h.apiVersion >= api.request.flexibleFrom;
  readRequestHeaderRest(r, h, flexible);
  if (!r.ok) return null;
  const body = decode(api.request, h.apiVersion, r);
  return r.ok ? { apiKey: h.apiKey, version: h.apiVersion, body } : null;
}

export const schemaByKey = new Map<number, ApiSchema>(apiSchemas.map((a) => [a.apiKey, a]));

// ---- record batches -----------------------------------------------------------------------------

function varint(w: Writer, v: number): void {
  w.varint(v);
}

interface RecordSpec {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: [Uint8Array, Uint8Array | null][];
  tsDelta: bigint;
}

function encodeRecords(recs: RecordSpec[], lie?: { at: number; field: "length" | "keyLength" | "valueLength" | "headerCount" | "offsetDelta"; v: number }): Uint8Array {
  const out = new Writer(256);
  recs.forEach((r, i) => {
    const b = new Writer(64);
    b.int8(0);
    b.varlong(r.tsDelta);
    varint(b, lie?.at === i && lie.field === "offsetDelta" ? lie.v : i);
    const kl = r.key === null ? -1 : r.key.length;
    varint(b, lie?.at === i && lie.field === "keyLength" ? lie.v : kl);
    if (r.key !== null) b.bytes(r.key);
    const vl = r.value === null ? -1 : r.value.length;
    varint(b, lie?.at === i && lie.field === "valueLength" ? lie.v : vl);
    if (r.value !== null) b.bytes(r.value);
    varint(b, lie?.at === i && lie.field === "headerCount" ? lie.v : r.headers.length);
    for (const [hk, hv] of r.headers) {
      varint(b, hk.length);
      b.bytes(hk);
      varint(b, hv === null ? -1 : hv.length);
      if (hv !== null) b.bytes(hv);
    }
    const body = b.finish();
    varint(out, lie?.at === i && lie.field === "length" ? lie.v : body.length);
    out.bytes(body);
  });
  return out.finish().slice();
}

export interface BatchHeader {
  baseOffset: bigint;
  partitionLeaderEpoch: number;
  magic: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

/** A batch around `records` (already compressed when attributes say so), CRC32C computed. */
export function assembleBatch(h: BatchHeader, records: Uint8Array, opts: { batchLengthDelta?: number; badCrc?: boolean } = {}): Uint8Array {
  const w = new Writer(61 + records.length);
  w.int64(h.baseOffset);
  w.int32(49 + records.length + (opts.batchLengthDelta ?? 0));
  w.int32(h.partitionLeaderEpoch);
  w.int8(h.magic);
  const crcAt = w.reserve(4);
  w.int16(h.attributes);
  w.int32(h.lastOffsetDelta);
  w.int64(h.baseTimestamp);
  w.int64(h.maxTimestamp);
  w.int64(h.producerId);
  w.int16(h.producerEpoch);
  w.int32(h.baseSequence);
  w.int32(h.recordCount);
  w.bytes(records);
  const out = w.finish().slice();
  let crc = crc32c(out, crcAt + 4, out.length);
  if (opts.badCrc) crc = (crc ^ (1 << (crc & 31))) >>> 0;
  new DataView(out.buffer).setUint32(crcAt, crc);
  return out;
}

function randomRecords(rng: Rng): RecordSpec[] {
  const n = rng.weighted([[1, 0], [10, 1], [6, rng.range(2, 5)], [1, rng.range(6, 40)]] as const);
  const out: RecordSpec[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      key: rng.chance(0.4) ? null : rng.bytes(rng.range(0, 16)),
      value: rng.chance(0.05) ? null : rng.bytes(rng.weighted([[12, rng.range(0, 64)], [1, rng.range(64, 2000)]] as const)),
      headers: rng.chance(0.8) ? [] : Array.from({ length: rng.range(1, 3) }, () => [rng.bytes(rng.range(0, 8)), rng.chance(0.2) ? null : rng.bytes(rng.range(0, 8))] as [Uint8Array, Uint8Array | null]),
      tsDelta: BigInt(rng.range(0, 1000)),
    });
  }
  return out;
}

function validHeader(rng: Rng, recs: RecordSpec[], codec: number): BatchHeader {
  const base = BigInt(Date.now()) - BigInt(rng.range(0, 10_000));
  let maxDelta = 0n;
  for (const r of recs) if (r.tsDelta > maxDelta) maxDelta = r.tsDelta;
  return {
    baseOffset: 0n,
    partitionLeaderEpoch: -1,
    magic: 2,
    attributes: codec,
    lastOffsetDelta: Math.max(0, recs.length - 1),
    baseTimestamp: base,
    maxTimestamp: base + maxDelta,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    recordCount: recs.length,
  };
}

let bomb: Uint8Array | null = null;
/** gzip of 80 MiB of zeros (about 80 KB): past limits.decompressedBytesMax once inflated. */
function gzipBomb(): Uint8Array {
  bomb ??= new Uint8Array(gzipSync(new Uint8Array(80 * 1024 * 1024), { level: 9 }));
  return bomb;
}

export type BatchKind =
  | "valid" | "valid-compressed" | "crc-ok-mutated-records" | "bad-crc" | "compressed-garbage" | "compressed-mutated"
  | "header-lie" | "record-lie" | "timestamp-extreme" | "transactional-bits" | "legacy-garbage" | "truncated" | "multi"
  | "empty" | "bomb";

/** Produce's records field: one batch (or several) of the chosen kind. */
export function batchVariant(rng: Rng, kind: BatchKind): Uint8Array {
  const recs = randomRecords(rng);
  const plain = () => encodeRecords(recs);
  switch (kind) {
    case "valid":
      return assembleBatch(validHeader(rng, recs, 0), plain());
    case "valid-compressed": {
      const codec = rng.range(1, 4);
      return assembleBatch(validHeader(rng, recs, codec), compress(codec, plain()));
    }
    case "crc-ok-mutated-records": {
      const r = plain();
      if (r.length > 0) for (let i = rng.range(1, 4); i > 0; i--) r[rng.int(r.length)] = rng.pick([0, 0xff, 0x7f, 0x80, rng.u32() & 0xff]);
      return assembleBatch(validHeader(rng, recs, 0), r);
    }
    case "bad-crc":
      return assembleBatch(validHeader(rng, recs, rng.chance(0.7) ? 0 : rng.range(1, 4)), plain(), { badCrc: true });
    case "compressed-garbage":
      return assembleBatch(validHeader(rng, recs, rng.range(1, 7)), rng.bytes(rng.range(0, 300)));
    case "compressed-mutated": {
      const codec = rng.range(1, 4);
      const c = compress(codec, plain()).slice();
      for (let i = rng.range(1, 3); i > 0 && c.length > 0; i--) c[rng.int(c.length)] ^= 1 << rng.int(8);
      return assembleBatch(validHeader(rng, recs, codec), c);
    }
    case "header-lie": {
      const h = validHeader(rng, recs, 0);
      const which = rng.int(7);
      if (which === 0) h.lastOffsetDelta = rng.pick([2147483647, 2147483646, -1, -2147483648, recs.length + 5]);
      else if (which === 1) h.recordCount = rng.pick([2147483647, -1, 1000, 0, recs.length + 1, recs.length - 1]);
      else if (which === 2) h.magic = rng.pick([0, 1, 3, 255, -1]);
      else if (which === 3) h.attributes = rng.u32() & 0xffff;
      else if (which === 4) h.baseOffset = rng.pick([2n ** 63n - 1n, -1n, 12345n]);
      else if (which === 5) h.partitionLeaderEpoch = rng.pick([2147483647, -2, 5]);
      else return assembleBatch(h, plain(), { batchLengthDelta: rng.pick([-1, 1, -49, 1 << 30, -(1 << 30), 8]) });
      return assembleBatch(h, plain());
    }
    case "record-lie": {
      const field = rng.pick(["length", "keyLength", "valueLength", "headerCount", "offsetDelta"] as const);
      const v = rng.pick([2147483647, -2, -1000, 1000, 0, 1 << 20, -2147483648]);
      const rs = recs.length > 0 ? recs : randomRecords(new Rng(rng.u32())).concat([{ key: null, value: new Uint8Array(1), headers: [], tsDelta: 0n }]);
      return assembleBatch(validHeader(rng, rs, 0), encodeRecords(rs, { at: rng.int(rs.length), field, v }));
    }
    case "timestamp-extreme": {
      const h = validHeader(rng, recs, 0);
      const ts = rng.pick([2n ** 63n - 1n, 2n ** 53n + 7n, -(2n ** 63n), -5n, 0n, 253402300800000n]);
      if (rng.chance(0.5)) h.baseTimestamp = ts;
      h.maxTimestamp = rng.chance(0.8) ? ts : h.baseTimestamp;
      const rs = rng.chance(0.3) ? recs.map((r) => ({ ...r, tsDelta: rng.pick([2n ** 62n, -(2n ** 62n), 2n ** 63n - 1n]) })) : recs;
      return assembleBatch(h, encodeRecords(rs));
    }
    case "transactional-bits": {
      const h = validHeader(rng, recs, 0);
      h.attributes = rng.pick([0x10, 0x20, 0x30, 0x18, 0x08]) | (rng.chance(0.2) ? rng.range(1, 4) : 0);
      h.producerId = rng.pick([-1n, 0n, 1n, 2n ** 62n]);
      h.producerEpoch = rng.pick([-1, 0, 32767]);
      h.baseSequence = rng.pick([-1, 0, 2147483647]);
      const codec = h.attributes & 7; // 0-4
      return assembleBatch(h, codec !== 0 ? compress(codec, plain()) : plain());
    }
    case "legacy-garbage": {
      // magic 0/1 message-set shaped bytes: offset, size, crc, magic, attributes, ...
      const w = new Writer(64);
      w.int64(0n).int32(rng.pick([14, 22, 1 << 30, -1, 5])).uint32(rng.u32()).int8(rng.pick([0, 1])).int8(rng.pick([0, 1, 2, 3, 7]));
      w.bytes(rng.bytes(rng.range(0, 40)));
      return w.finish().slice();
    }
    case "truncated": {
      const b = assembleBatch(validHeader(rng, recs, rng.chance(0.5) ? 0 : rng.range(1, 4)), plain());
      return b.slice(0, rng.int(b.length));
    }
    case "multi": {
      const parts: Uint8Array[] = [];
      for (let i = rng.range(2, 4); i > 0; i--) {
        parts.push(batchVariant(rng, rng.pick(["valid", "valid", "valid-compressed", "bad-crc", "record-lie", "header-lie"] as const)));
      }
      return concat(parts);
    }
    case "empty":
      return rng.chance(0.5) ? new Uint8Array(0) : rng.bytes(rng.range(1, 60));
    case "bomb": {
      const h = validHeader(rng, [{ key: null, value: null, headers: [], tsDelta: 0n }], 1);
      return assembleBatch(h, gzipBomb());
    }
  }
}

function recordsValue(ctx: GenContext): Uint8Array | null {
  const { rng } = ctx;
  if (ctx.apiKey !== 0) return rng.bytes(rng.range(0, 80));
  const kind = rng.weighted<BatchKind>([
    [30, "valid"], [7, "valid-compressed"], [8, "crc-ok-mutated-records"], [5, "bad-crc"], [5, "compressed-garbage"],
    [3, "compressed-mutated"], [8, "header-lie"], [8, "record-lie"], [4, "timestamp-extreme"], [4, "transactional-bits"],
    [ctx.version < 3 ? 8 : 2, "legacy-garbage"], [4, "truncated"], [4, "multi"], [2, "empty"], [bombWeight, "bomb"],
  ]);
  batchKindCounts[kind] = (batchKindCounts[kind] ?? 0) + 1;
  return batchVariant(rng, kind);
}

/** Batch kinds generated in this process so far (for the run's summary). */
export const batchKindCounts: Record<string, number> = {};
/** Weight of the gzip bomb among batch kinds (out of ~109): rare, as each costs the broker an inflate. */
const bombWeight = 0.01;

// ---- hostile frames -----------------------------------------------------------------------------

export type FrameKind =
  | "valid" | "truncate" | "bitflip" | "bytes" | "splice" | "insert" | "delete" | "length" | "trailing"
  | "header" | "size-lie" | "size-huge" | "size-tiny";

/** One frame to send, with what made it (for the failure report). */
export interface PlannedFrame {
  bytes: Uint8Array;
  apiKey: number;
  version: number;
  kind: FrameKind;
  correlationId: number;
  /** True when the frame's declared size swallows what follows: nothing after it is worth sending. */
  poisonsStream: boolean;
  /** A produce with acks=0 (valid): the broker sends no answer. */
  noAnswer: boolean;
}

export interface Advertised {
  apiKey: number;
  min: number;
  max: number;
}

export interface PlanOptions {
  advertised: Advertised[];
  pools: Pools;
  /** Control APIs (4-7) only with values the broker refuses (stale controller epoch, other broker). */
  staleControl: boolean;
  /** Only these API keys (the control phase). */
  onlyKeys?: number[];
}

/**
 * Whether a request the broker would accept would change state the round-trip check depends on,
 * which only a controller may do (see wire.test.ts): such frames are not sent in the main phase.
 */
export function legitimatelyDisruptive(d: { apiKey: number; version: number; body: Struct }, pools: Pools): boolean {
  const b = d.body;
  switch (d.apiKey) {
    case 4:
    case 5:
    case 6:
      return (b.controllerEpoch as number) >= 0;
    case 7:
      return (b.brokerId as number) === pools.brokerId;
    case 19: // CreateTopics: a bounded number of small topics, so a run takes bounded time
      if (b.validateOnly === true) return false;
      return ((b.topics as Struct[]) ?? []).some((t) => {
        const n = t.numPartitions as number;
        const assigned = (t.assignments as unknown[] | null)?.length ?? 0;
        const name = t.name as string;
        const known = pools.spareTopics.includes(name) || pools.topics.includes(name) || name === "__consumer_offsets";
        return n > 8 || assigned > 8 || (!known && /^[a-zA-Z0-9._-]+$/.test(name));
      });
    case 37:
      if (b.validateOnly === true) return false;
      return ((b.topics as Struct[]) ?? []).some((t) => (t.count as number) > 8);
    case 20:
      return ((b.topics as Struct[] | null) ?? []).some((t) => pools.topics.includes(t.name as string)) ||
        ((b.topicNames as string[] | null) ?? []).some((n) => pools.topics.includes(n));
    default:
      return false;
  }
}

/** API keys legitimatelyDisruptive() looks at. */
const mayDisrupt = new Set([4, 5, 6, 7, 19, 20, 37]);

export class SessionPlanner {
  readonly rng: Rng;
  private nextCid = 1;
  private readonly byKey = new Map<number, Advertised>();

  constructor(seed: number, private readonly opts: PlanOptions) {
    this.rng = new Rng(seed);
    for (const a of opts.advertised) this.byKey.set(a.apiKey, a);
  }

  private chooseApi(): { api: ApiSchema; version: number } {
    const { rng } = this;
    const keys = this.opts.onlyKeys ?? this.opts.advertised.map((a) => a.apiKey);
    // Produce and Fetch get extra weight: they carry the records and reach the logs.
    const key = rng.chance(0.25) ? 0 : rng.chance(0.12) ? 1 : rng.pick(keys);
    const a = this.byKey.get(this.opts.onlyKeys !== undefined && !keys.includes(key) ? keys[0] : key)!;
    return { api: schemaByKey.get(a.apiKey)!, version: rng.range(a.min, a.max) };
  }

  private ctx(): GenContext {
    return { rng: this.rng, pools: this.opts.pools, apiKey: 0, version: 0, staleControl: this.opts.staleControl, depth: 0 };
  }

  /** A request that decodes (before any hostile change), as header + body with its length sites. */
  private request(): { api: ApiSchema; version: number; cid: number; header: Uint8Array; body: Struct; enc: { bytes: Uint8Array; sites: LengthSite[] } } {
    for (;;) {
      const { api, version } = this.chooseApi();
      const body = randomRequest(api, version, this.ctx());
      const enc = encodeBody(api.request, version, body);
      const cid = this.nextCid++;
      const header = encodeHeader(api.apiKey, version, cid, version >= api.request.flexibleFrom, this.rng.chance(0.1) ? null : "fuzz");
      if (this.opts.staleControl && legitimatelyDisruptive({ apiKey: api.apiKey, version, body }, this.opts.pools)) continue;
      return { api, version, cid, header, body, enc };
    }
  }

  /** The next frame: `hostile` picks a byte-level change (which usually closes the connection). */
  frame(hostile: boolean): PlannedFrame {
    for (;;) {
      const f = this.frameOnce(hostile);
      if (!this.opts.staleControl || f.poisonsStream) return f;
      // A mutation may have turned a refused control request into an accepted one: check as the
      // broker would decode it.
      const payload = f.bytes.subarray(4);
      const dv = new DataView(f.bytes.buffer, f.bytes.byteOffset);
      if (payload.length < 2 || !mayDisrupt.has(dv.getInt16(4))) return f;
      const d = dv.getInt32(0) === payload.length ? decodeAsBroker(payload, this.advertisedMap()) : null;
      if (d !== null && legitimatelyDisruptive(d, this.opts.pools)) continue;
      return f;
    }
  }

  private advertisedCache: Map<number, { min: number; max: number }> | null = null;
  advertisedMap(): Map<number, { min: number; max: number }> {
    this.advertisedCache ??= new Map(this.opts.advertised.map((a) => [a.apiKey, { min: a.min, max: a.max }]));
    return this.advertisedCache;
  }

  private frameOnce(hostile: boolean): PlannedFrame {
    const { rng } = this;
    const r = this.request();
    const payload = concat([r.header, r.enc.bytes]);
    const noAnswer = r.api.apiKey === 0 && (r.body.acks as number) === 0;
    const base = { apiKey: r.api.apiKey, version: r.version, correlationId: r.cid, poisonsStream: false, noAnswer };
    if (!hostile) return { ...base, bytes: withSize(payload), kind: "valid" };
    const hl = r.header.length;
    const kind = rng.weighted<FrameKind>([
      [14, "truncate"], [14, "bitflip"], [14, "bytes"], [8, "splice"], [5, "insert"], [5, "delete"], [18, "length"],
      [6, "trailing"], [8, "header"], [3, "size-lie"], [2, "size-huge"], [2, "size-tiny"],
    ]);
    const mutFrom = rng.chance(0.9) ? Math.min(8, payload.length) : 0; // keep key, version, correlation id mostly
    const out = { ...base, kind, noAnswer: false };
    switch (kind) {
      case "truncate":
        return { ...out, bytes: withSize(payload.slice(0, rng.range(rng.chance(0.8) ? hl : 0, Math.max(0, payload.length - 1)))) };
      case "bitflip": {
        const p = payload.slice();
        for (let i = rng.range(1, 6); i > 0 && p.length > mutFrom; i--) p[rng.range(mutFrom, p.length - 1)] ^= 1 << rng.int(8);
        return { ...out, bytes: withSize(p) };
      }
      case "bytes": {
        const p = payload.slice();
        for (let i = rng.range(1, 6); i > 0 && p.length > mutFrom; i--) p[rng.range(mutFrom, p.length - 1)] = rng.pick([0, 0xff, 0x7f, 0x80, 0xfe, 0x01, rng.u32() & 0xff]);
        return { ...out, bytes: withSize(p) };
      }
      case "splice": {
        const other = this.request();
        const a = payload.slice(0, rng.range(Math.min(hl, payload.length), payload.length));
        const ob = concat([other.header, other.enc.bytes]);
        return { ...out, bytes: withSize(concat([a, ob.slice(rng.int(ob.length))])) };
      }
      case "insert": {
        const at = rng.range(mutFrom, payload.length);
        return { ...out, bytes: withSize(concat([payload.slice(0, at), rng.bytes(rng.range(1, 16)), payload.slice(at)])) };
      }
      case "delete": {
        const at = rng.range(mutFrom, payload.length);
        return { ...out, bytes: withSize(concat([payload.slice(0, at), payload.slice(Math.min(payload.length, at + rng.range(1, 16)))])) };
      }
      case "length": {
        if (r.enc.sites.length === 0) return { ...out, bytes: withSize(concat([payload, rng.bytes(4)])), kind: "trailing" };
        const site = rng.int(r.enc.sites.length);
        const k = r.enc.sites[site].kind;
        const raw = k === "uvarint"
          ? rng.pick([0, 0xffffffff, 0x7fffffff, 0x80000000, 2, 1_000_001, 1 << 20, 100_000])
          : k === "i32"
          ? rng.pick([-1, -2, -2147483648, 2147483647, 1_000_001, 1 << 20, 100_000, 65536])
          : rng.pick([-1, -2, -32768, 32767, 1000, 256]);
        const re = encodeBody(r.api.request, r.version, r.body, { site, raw });
        return { ...out, bytes: withSize(concat([r.header, re.bytes])) };
      }
      case "trailing":
        return { ...out, bytes: withSize(concat([payload, rng.bytes(rng.range(1, 64))])) };
      case "header": {
        const p = payload.slice();
        const dv = new DataView(p.buffer);
        const which = rng.int(5);
        if (which === 0) dv.setInt16(0, rng.pick([17, 22, 24, 57, 60, 67, 68, 1000, 32767, -1, -32768]));
        else if (which === 1) {
          const a = this.byKey.get(r.api.apiKey)!;
          dv.setInt16(2, rng.pick([a.max + 1, a.min - 1, -1, 32767, -32768]));
        } else if (which === 2 && p.length >= 10) dv.setInt16(8, rng.pick([-2, -32768, 32767, 1000, p.length - 9]));
        else if (which === 3) return { ...out, bytes: withSize(p.slice(0, rng.range(8, Math.min(p.length, hl + 2)))) };
        else if (r.version >= r.api.request.flexibleFrom) {
          // header v2 tagged fields: a count or a size far past the end
          const tagsAt = hl - 1;
          const garbage = rng.pick([[0xff, 0xff, 0xff, 0xff, 0x0f], [0x01, 0x00, 0xff, 0xff, 0x03], [0x80, 0x80, 0x80, 0x80, 0x80, 0x01]]);
          return { ...out, bytes: withSize(concat([p.slice(0, tagsAt), Uint8Array.from(garbage), p.slice(hl)])) };
        } else dv.setInt16(8, -1);
        return { ...out, bytes: withSize(p) };
      }
      case "size-lie": {
        // The size says more than is sent: whatever follows on the connection becomes this frame.
        const more = rng.pick([1, 7, 100, 4096, 1 << 20]);
        return { ...out, bytes: withSize(payload, payload.length + more), poisonsStream: true };
      }
      case "size-huge": {
        const size = rng.pick([0x7fffffff, 104_857_601, 1 << 30, 104_857_600, 50 << 20]);
        return { ...out, bytes: withSize(payload.slice(0, Math.min(payload.length, 64)), size), poisonsStream: true };
      }
      case "size-tiny": {
        const size = rng.pick([0, 1, 7, -1, -2147483648]);
        return { ...out, bytes: withSize(payload.slice(0, Math.max(0, Math.min(payload.length, size))), size), poisonsStream: true };
      }
    }
    throw new Error(`frame kind ${kind}`);
  }

  /** ApiVersions v0: always answered, never closes; its answer proves everything before was read. */
  sentinel(): PlannedFrame {
    const cid = this.nextCid++;
    return { bytes: withSize(encodeHeader(18, 0, cid, false)), apiKey: 18, version: 0, kind: "valid", correlationId: cid, poisonsStream: false, noAnswer: false };
  }
}

export function toHex(b: Uint8Array, max = 512): string {
  let s = "";
  for (let i = 0; i < Math.min(b.length, max); i++) s += b[i].toString(16).padStart(2, "0");
  return b.length > max ? `${s}…(+${b.length - max} bytes)` : s;
}
