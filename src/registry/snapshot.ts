// The embedded registry's files, encoded: snapshot.json and the JSON payload of each journal
// record (journal.ts frames and checks the records). Both carry nodes in the same form.
//
// Snapshot file: `<dir>/snapshot.json`, UTF-8 JSON, one node per line for operators' eyes:
//   {"format":"strand-registry-snapshot","version":1,"zxid":"<last zxid, decimal>","nodes":[
//   {"path":"/","data":"<base64>","czxid":"0","mzxid":"0","pzxid":"7","ctime":0,"mtime":0,
//    "version":0,"cversion":3},
//   ...]}
// zxids are decimal strings (64-bit); cversion (creations + deletions of children, as ZooKeeper
// shows it) with the number of children gives the sequence counter for sequential
// children. Ephemeral nodes are never written.
//
// Journal record: {"zxid":"<decimal>","put":[<node as in the snapshot>...],"del":["<path>"...]}.
//
// Parsers never trust the bytes: every field is checked (paths by ZooKeeper's rules, data
// bounded by nodeDataBytesMax, zxids below 2^63) and a problem is reported through `fail`,
// which names the file to the operator.

import { base64Decode, base64Encode, nodeDataBytesMax, registryLoadNodesPerStep, utf8Bytes } from "../util/mod.ts";
import { pathProblem } from "./paths.ts";

const snapshotFormat = "strand-registry-snapshot";
const snapshotVersion = 1;

/** A node of the tree, as ZooKeeper's DataNode with its Stat; children are names. */
export interface ZNode {
  data: Uint8Array;
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  ephemeralOwner: bigint;
  children: Set<string>;
}

export function newNode(data: Uint8Array, zxid: bigint, nowMs: number, ephemeralOwner: bigint): ZNode {
  return {
    data,
    czxid: zxid,
    mzxid: zxid,
    pzxid: zxid,
    ctime: nowMs,
    mtime: nowMs,
    version: 0,
    cversion: 0,
    ephemeralOwner,
    children: new Set(),
  };
}

/** The snapshot of the tree's persistent nodes at zxid, one node per line. */
export function encodeSnapshot(nodes: ReadonlyMap<string, ZNode>, zxid: bigint): Uint8Array {
  const lines: string[] = [];
  // Map order is creation order, so parents come before their children.
  for (const [path, node] of nodes) {
    if (node.ephemeralOwner === 0n) lines.push(JSON.stringify(snapshotEntry(path, node)));
  }
  return utf8Bytes(`${snapshotHead(zxid)}\n${lines.join(",\n")}\n]}\n`);
}

/** The snapshot's first line: its head and the opening of the node list (one node a line follows). */
export function snapshotHead(zxid: bigint): string {
  const head = JSON.stringify({ format: snapshotFormat, version: snapshotVersion, zxid: String(zxid) });
  return `${head.slice(0, -1)},"nodes":[`;
}

/** The journal record of a transaction: the state after it of every persistent node it touched. */
export function journalRecord(zxid: bigint, touched: Iterable<string>, nodes: ReadonlyMap<string, ZNode>): Uint8Array {
  const put: string[] = [];
  const del: string[] = [];
  for (const path of touched) {
    const node = nodes.get(path);
    if (node === undefined) del.push(JSON.stringify(path));
    else if (node.ephemeralOwner === 0n) put.push(JSON.stringify(snapshotEntry(path, node)));
  }
  return utf8Bytes(`{"zxid":"${zxid}","put":[${put.join(",")}],"del":[${del.join(",")}]}`);
}

export function parseJournalRecord(
  payload: Uint8Array,
  fail: (why: string) => never,
): { zxid: bigint; put: Array<{ path: string; node: ZNode }>; del: string[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload));
  } catch (e) {
    fail(`not JSON: ${e instanceof Error ? e.message : e}`);
  }
  if (!isRecord(doc)) fail("not an object");
  const d = doc as Record<string, unknown>;
  const zxid = zxidField(d.zxid, "zxid", fail);
  if (!Array.isArray(d.put) || !Array.isArray(d.del)) fail("put or del is not an array");
  const put = (d.put as unknown[]).map((raw, i) => parseEntry(raw, i, fail));
  const del = (d.del as unknown[]).map((p) => {
    if (typeof p !== "string" || pathProblem(p) !== null) fail(`bad path ${JSON.stringify(p)} in del`);
    return p as string;
  });
  return { zxid, put, del };
}

export function snapshotEntry(path: string, node: ZNode): Record<string, unknown> {
  return {
    path,
    data: toBase64(node.data),
    czxid: String(node.czxid),
    mzxid: String(node.mzxid),
    pzxid: String(node.pzxid),
    ctime: node.ctime,
    mtime: node.mtime,
    version: node.version,
    cversion: node.cversion,
  };
}

/**
 * parseSnapshot a node at a time (a `yield` after each): the file as encodeSnapshot writes it has
 * one node per line, each parsed on its own. A file laid out otherwise, or one that does not
 * parse, goes to parseSnapshot whole, whose answer (or error) is the one that counts.
 */
export function* parseSnapshotGradually(
  bytes: Uint8Array,
  fail: (why: string) => never,
): Generator<void, { zxid: bigint; entries: Array<{ path: string; node: ZNode }> }> {
  const nodesOpen = ',"nodes":[';
  // Split at newline bytes and decode each line alone (a newline byte is never inside a UTF-8
  // sequence): decoding megabytes whole took tens of ms in one piece.
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const lines: Uint8Array[] = [];
  for (let from = 0;;) {
    const nl = bytes.indexOf(0x0a, from);
    lines.push(bytes.subarray(from, nl < 0 ? bytes.length : nl));
    if (nl < 0) break;
    from = nl + 1;
    if (lines.length % registryLoadNodesPerStep === 0) yield;
  }
  let head: Record<string, unknown>;
  try {
    const n = lines.length;
    const first = decoder.decode(lines[0]);
    if (n < 4 || !first.endsWith(nodesOpen) || decoder.decode(lines[n - 2]) !== "]}" || lines[n - 1].length !== 0) return parseSnapshot(bytes, fail);
    head = JSON.parse(first.slice(0, -nodesOpen.length) + "}");
  } catch {
    return parseSnapshot(bytes, fail);
  }
  if (!isRecord(head) || head.format !== snapshotFormat || head.version !== snapshotVersion) return parseSnapshot(bytes, fail);
  const zxid = zxidField(head.zxid, "zxid", fail);
  const entries: Array<{ path: string; node: ZNode }> = [];
  const last = lines.length - 3;
  for (let i = 1; i <= last; i++) {
    let raw: unknown;
    try {
      const line = decoder.decode(lines[i]);
      const comma = line.endsWith(",");
      if (comma === (i === last)) return parseSnapshot(bytes, fail); // a comma after all but the last
      raw = JSON.parse(comma ? line.slice(0, -1) : line);
    } catch {
      return parseSnapshot(bytes, fail);
    }
    entries.push(parseEntry(raw, i - 1, fail));
    yield;
  }
  return { zxid, entries };
}

export function parseSnapshot(
  bytes: Uint8Array,
  fail: (why: string) => never,
): { zxid: bigint; entries: Array<{ path: string; node: ZNode }> } {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    fail(`not JSON: ${e instanceof Error ? e.message : e}`);
  }
  if (!isRecord(doc) || doc.format !== snapshotFormat) fail(`not a ${snapshotFormat} document`);
  const d = doc as Record<string, unknown>;
  if (d.version !== snapshotVersion) fail(`unsupported version ${JSON.stringify(d.version)}`);
  const zxid = zxidField(d.zxid, "zxid", fail);
  if (!Array.isArray(d.nodes)) fail("nodes is not an array");
  const entries = (d.nodes as unknown[]).map((raw, i) => parseEntry(raw, i, fail));
  return { zxid, entries };
}

function parseEntry(
  raw: unknown,
  index: number,
  fail: (why: string) => never,
): { path: string; node: ZNode } {
  const where = `node #${index}`;
  if (!isRecord(raw)) fail(`${where} is not an object`);
  const r = raw as Record<string, unknown>;
  if (typeof r.path !== "string" || pathProblem(r.path) !== null) fail(`${where} has a bad path`);
  const path = r.path as string;
  const data = typeof r.data === "string" ? fromBase64(r.data) : null;
  if (data === null) fail(`${path}: data is not base64`);
  if (data!.length > nodeDataBytesMax) fail(`${path}: data larger than ${nodeDataBytesMax} bytes`);
  const int = (v: unknown, name: string): number => {
    if (!Number.isSafeInteger(v)) fail(`${path}: ${name} is not an integer`);
    return v as number;
  };
  return {
    path,
    node: {
      data: data!,
      czxid: zxidField(r.czxid, `${path}: czxid`, fail),
      mzxid: zxidField(r.mzxid, `${path}: mzxid`, fail),
      pzxid: zxidField(r.pzxid, `${path}: pzxid`, fail),
      ctime: int(r.ctime, "ctime"),
      mtime: int(r.mtime, "mtime"),
      version: int(r.version, "version"),
      cversion: int(r.cversion, "cversion"),
      ephemeralOwner: 0n,
      children: new Set(),
    },
  };
}

function zxidField(v: unknown, name: string, fail: (why: string) => never): bigint {
  if (typeof v !== "string" || !/^\d{1,19}$/.test(v)) fail(`${name} is not a decimal zxid`);
  const z = BigInt(v as string);
  if (z >= 1n << 63n) fail(`${name} is out of range`);
  return z;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// A topic znode of 10,000 partitions is ~100 KB, encoded at every journal record and snapshot:
// util's base64 uses Uint8Array's own (some ten times faster than btoa) where the runtime has it.
const toBase64 = base64Encode;
const fromBase64 = base64Decode;
