// The ZooKeeper client's pure parts: jute records (golden bytes written by ZooKeeper 3.8's own
// Java classes, and round trips of every record), multi encoding, frames, connect strings, path
// rules, the watch table, error codes, digest ids.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Connection } from "../../src/platform/mod.ts";
import { Reader, Writer } from "../../src/util/mod.ts";
import {
  digestId,
  FrameError,
  FrameReader,
  jute,
  parseConnectString,
  pathProblem,
  prependChroot,
  records,
  stripChroot,
  ZkError,
  zkErrorCode,
  ZkErrorNumber,
} from "../../src/zk/mod.ts";
import { WatchTable, type ZkWatchEvent } from "../../src/zk/watches.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const fromHex = (s: string) => new Uint8Array(Buffer.from(s, "hex"));

// Printed by a Java program against /usr/share/java/zookeeper.jar (ZooKeeper 3.8.0):
// BinaryOutputArchive over ConnectRequest(0, 0x1122334455L, 18000, 0L, new byte[16]) + readOnly
// false, with the length prefix; RequestHeader(7, create2) + CreateRequest("/a/b", "hi",
// OPEN_ACL_UNSAFE, 3); MultiOperationRecord(check("/x",3), delete("/y",-1), setData("/z",[1],2),
// create("/w", [], OPEN_ACL_UNSAFE, PERSISTENT)); SetWatches(5, ["/d"], ["/e"], ["/c"]);
// AuthPacket(0, "digest", "u:p"); DigestAuthenticationProvider.generateDigest("user:secret").
const golden = {
  connect: "0000002d000000000000001122334455000046500000000000000000000000100000000000000000000000000000000000",
  create2: "000000070000000f000000042f612f62000000026869000000010000001f00000005776f726c6400000006616e796f6e6500000003",
  multi:
    "0000000d00ffffffff000000022f78000000030000000200ffffffff000000022f79ffffffff0000000500ffffffff000000022f7a0000000101000000020000000100ffffffff000000022f7700000000000000010000001f00000005776f726c6400000006616e796f6e6500000000ffffffff01ffffffff",
  setWatches: "000000000000000500000001000000022f6400000001000000022f6500000001000000022f63",
  auth: "000000000000000664696765737400000003753a70",
  digest: "user:5w9W4eL3797Y4Wq8AcKUPPk8ha4=",
};

test("zk codec: a ConnectRequest frame is byte for byte what ZooKeeper's Java client writes", () => {
  const frame = records.connectFrame({
    protocolVersion: 0,
    lastZxidSeen: 0x1122334455n,
    timeOut: 18_000,
    sessionId: 0n,
    passwd: new Uint8Array(16),
  });
  assert.equal(hex(frame), golden.connect);
  assert.equal(frame.length, 4 + 45);
});

test("zk codec: create2, multi, SetWatches and auth match ZooKeeper's bytes", () => {
  const create = records.requestFrame(7, records.OpCode.create2, (w) =>
    records.CreateRequest.encode(w, {
      path: "/a/b",
      data: new TextEncoder().encode("hi"),
      acl: records.Ids.OPEN_ACL_UNSAFE,
      flags: records.CreateFlags["ephemeral-sequential"],
    }));
  assert.equal(hex(create.subarray(4)), golden.create2);
  assert.equal(new DataView(create.buffer).getInt32(0), create.length - 4, "length prefix");

  const w = new Writer();
  records.writeMulti(w, [
    { type: records.OpCode.check, write: (w) => records.CheckVersionRequest.encode(w, { path: "/x", version: 3 }) },
    { type: records.OpCode.delete, write: (w) => records.DeleteRequest.encode(w, { path: "/y", version: -1 }) },
    {
      type: records.OpCode.setData,
      write: (w) => records.SetDataRequest.encode(w, { path: "/z", data: new Uint8Array([1]), version: 2 }),
    },
    {
      type: records.OpCode.create,
      write: (w) =>
        records.CreateRequest.encode(w, { path: "/w", data: new Uint8Array(0), acl: records.Ids.OPEN_ACL_UNSAFE, flags: 0 }),
    },
  ]);
  assert.equal(hex(w.finish()), golden.multi);

  const sw = records.SetWatches.toBytes({ relativeZxid: 5n, dataWatches: ["/d"], existWatches: ["/e"], childWatches: ["/c"] });
  assert.equal(hex(sw), golden.setWatches);
  const auth = records.AuthPacket.toBytes({ type: 0, scheme: "digest", auth: new TextEncoder().encode("u:p") });
  assert.equal(hex(auth), golden.auth);
});

test("zk codec: digest ids are ZooKeeper's generateDigest", async () => {
  assert.equal(await digestId("user:secret"), golden.digest);
  await assert.rejects(digestId("no-colon"), (e: unknown) => e instanceof ZkError && e.code === "BadArguments");
});

/** A value for every field of a record, varied by seed so fields do not all look alike. */
function sample(type: jute.FieldType, seed: number): unknown {
  switch (type) {
    case "int":
      return seed % 2 === 0 ? -seed - 1 : 0x7fff0000 + seed;
    case "long":
      return seed % 2 === 0 ? -(1n << 62n) + BigInt(seed) : (1n << 40n) + BigInt(seed);
    case "boolean":
      return seed % 2 === 1;
    case "ustring":
      return `/p${seed}/ünïcødé`;
    case "buffer":
      return new Uint8Array(seed % 5).map((_, i) => i * 37 + seed);
  }
  if ("vector" in type) return Array.from({ length: seed % 3 + 1 }, (_, i) => sample(type.vector, seed + i + 1));
  const out: Record<string, unknown> = {};
  let i = seed;
  for (const [name, t] of Object.entries(type.fields as jute.Fields)) out[name] = sample(t, ++i);
  return out;
}

test("zk codec: every record round-trips, and every truncation is caught without throwing", () => {
  for (const [name, rec] of Object.entries(records.records)) {
    const value = sample(rec, name.length) as jute.RecordValue<jute.Fields>;
    const bytes = rec.toBytes(value);
    const r = new Reader(bytes);
    assert.deepEqual(rec.decode(r), value, name);
    assert.ok(r.ok && r.remaining === 0, `${name}: consumed exactly`);
    for (let cut = 0; cut < bytes.length; cut++) {
      const short = new Reader(bytes.subarray(0, cut));
      rec.decode(short);
      assert.ok(!short.ok, `${name} cut at ${cut} of ${bytes.length} must be refused`);
    }
  }
});

test("zk codec: impossible lengths and counts mark the reader bad before allocating", () => {
  const w = new Writer();
  w.int32(0x7fffffff); // a children count no reply could hold
  const r = new Reader(w.finish());
  records.GetChildren2Response.decode(r);
  assert.ok(!r.ok);
  assert.match(r.error!, /does not fit/);
  const neg = new Writer().int32(-2).finish();
  const r2 = new Reader(neg);
  records.CreateResponse.decode(r2);
  assert.ok(!r2.ok, "a length of -2 is not null, it is garbage");
  // -1 is null: an empty buffer.
  const nullBuf = new Writer().int32(-1);
  records.Stat.encode(nullBuf, sample(records.Stat, 1) as never);
  const r3 = new Reader(nullBuf.finish());
  assert.deepEqual(records.GetDataResponse.decode(r3).data, new Uint8Array(0));
  assert.ok(r3.ok);
  // A boolean byte other than 0 or 1 means the stream is out of step.
  const r4 = new Reader(new Uint8Array([0, 0, 0, 1, 0x2f, 7]));
  records.PathWatchRequest.decode(r4);
  assert.ok(!r4.ok);
});

test("zk codec: ConnectResponse with and without the readOnly byte; garbage is null", () => {
  const base = records.ConnectResponse.toBytes({ protocolVersion: 0, timeOut: 6000, sessionId: 0x1234n, passwd: new Uint8Array(16).fill(9) });
  assert.deepEqual(records.decodeConnectResponse(base), {
    protocolVersion: 0,
    timeOut: 6000,
    sessionId: 0x1234n,
    passwd: new Uint8Array(16).fill(9),
    readOnly: false,
  });
  assert.equal(records.decodeConnectResponse(new Uint8Array([...base, 1]))!.readOnly, true);
  assert.equal(records.decodeConnectResponse(base.subarray(0, 10)), null);
  assert.equal(records.decodeConnectResponse(new Uint8Array([...base, 0, 0])), null, "trailing bytes");
  assert.equal(records.decodeConnectResponse(new TextEncoder().encode("HTTP/1.1 400 Bad Request\r\n\r\n")), null);
});

test("zk codec: multi responses round-trip; an unknown result type is refused", () => {
  const stat = sample(records.Stat, 3) as records.StatRecord;
  const results: records.MultiResultRecord[] = [
    { type: records.OpCode.create, path: "/a" },
    { type: records.OpCode.create2, path: "/b", stat },
    { type: records.OpCode.delete },
    { type: records.OpCode.setData, stat },
    { type: records.OpCode.check },
    { type: records.OpCode.error, err: ZkErrorNumber.BadVersion },
  ];
  const w = new Writer();
  records.writeMultiResponse(w, results);
  const r = new Reader(w.finish());
  assert.deepEqual(records.readMultiResponse(r, 10), results);
  assert.ok(r.ok && r.remaining === 0);
  const tooMany = new Reader(w.finish());
  records.readMultiResponse(tooMany, 5);
  assert.ok(!tooMany.ok, "more results than ops");
  const bad = new Writer();
  records.MultiHeader.encode(bad, { type: 99, done: false, err: 0 });
  const rb = new Reader(bad.finish());
  records.readMultiResponse(rb, 10);
  assert.ok(!rb.ok);
  assert.match(rb.error!, /unknown type 99/);
  const unterminated = new Writer();
  records.MultiHeader.encode(unterminated, { type: records.OpCode.delete, done: false, err: 0 });
  const ru = new Reader(unterminated.finish());
  records.readMultiResponse(ru, 10);
  assert.ok(!ru.ok, "no terminator");
});

/** A Connection fed from a list of chunks. */
function chunked(chunks: Uint8Array[]): Connection {
  return {
    remoteAddress: "test",
    remotePort: 0,
    localPort: 0,
    tls: null,
    closeReason: null,
    read: async () => chunks.shift() ?? null,
    write: async () => {},
    close() {},
  };
}

test("zk codec: frames are reassembled across chunks; bad lengths are refused", async () => {
  const f1 = records.requestFrame(1, 4, (w) => records.PathWatchRequest.encode(w, { path: "/x", watch: true }));
  const f2 = records.requestFrame(2, 11, () => {});
  const all = new Uint8Array([...f1, ...f2]);
  const pieces = [all.subarray(0, 3), all.subarray(3, 9), all.subarray(9, f1.length + 2), all.subarray(f1.length + 2)];
  const reader = new FrameReader(chunked(pieces), 1024);
  assert.deepEqual(await reader.next(), f1.subarray(4));
  assert.deepEqual(await reader.next(), f2.subarray(4));
  assert.equal(await reader.next(), null);
  const huge = new FrameReader(chunked([new Uint8Array([0x48, 0x54, 0x54, 0x50, 0x2f])]), 1024); // "HTTP/"
  await assert.rejects(huge.next(), FrameError);
  const negative = new FrameReader(chunked([new Uint8Array([0xff, 0xff, 0xff, 0xfe])]), 1024);
  await assert.rejects(negative.next(), /outside/);
  const cut = new FrameReader(chunked([new Uint8Array([0, 0, 0, 8, 1, 2])]), 1024);
  assert.equal(await cut.next(), null, "a frame cut by EOF is not handed out");
});

test("zk connect strings: hosts, default port, IPv6, chroot; malformed ones name the problem", () => {
  assert.deepEqual(parseConnectString("h1:2181,h2:2182/kafka"), {
    servers: [{ host: "h1", port: 2181 }, { host: "h2", port: 2182 }],
    chroot: "/kafka",
  });
  assert.deepEqual(parseConnectString(" zk "), { servers: [{ host: "zk", port: 2181 }], chroot: "" });
  assert.deepEqual(parseConnectString("[::1]:2181,10.0.0.1/"), {
    servers: [{ host: "::1", port: 2181 }, { host: "10.0.0.1", port: 2181 }],
    chroot: "",
  });
  assert.equal(parseConnectString("h:1/a/b/c").chroot, "/a/b/c");
  const bad: Array<[string, RegExp]> = [
    ["", /no servers/],
    ["h1:2181,", /is not host/],
    ["h1:0", /out of range/],
    ["h1:65536", /out of range/],
    ["h1:abc", /is not host/],
    ["h1:2181/kafka/", /chroot/],
    ["h1:2181/a//b", /chroot/],
    ["h 1:2181", /is not host/],
    [Array.from({ length: 65 }, (_, i) => `h${i}`).join(","), /more than 64/],
  ];
  for (const [text, why] of bad) {
    assert.throws(() => parseConnectString(text), (e: unknown) => {
      assert.ok(e instanceof ZkError && e.code === "BadArguments", text);
      assert.match(e.message, why, text);
      return true;
    });
  }
});

test("zk paths: ZooKeeper's rules; chroot applied and removed", () => {
  for (const ok of ["/", "/a", "/a/b.c", "/a/...", "/ü", "/a-1/b_2"]) assert.equal(pathProblem(ok), null, ok);
  for (const bad of ["", "a", "/a/", "//", "/a//b", "/.", "/a/..", "/a/./b", "/a\u0000", "/\u007f", "/\ud83d\ude00"]) {
    assert.notEqual(pathProblem(bad), null, JSON.stringify(bad));
  }
  assert.equal(prependChroot("/k", "/"), "/k");
  assert.equal(prependChroot("/k", "/x"), "/k/x");
  assert.equal(prependChroot("", "/x"), "/x");
  assert.equal(stripChroot("/k", "/k"), "/");
  assert.equal(stripChroot("/k", "/k/x/y"), "/x/y");
  assert.equal(stripChroot("/k", "/kafka"), "/kafka", "a sibling sharing the prefix is not inside");
  assert.equal(stripChroot("", "/x"), "/x");
});

test("zk watches: tables fill and empty as ZooKeeper's client does; one call per watcher per event", () => {
  const table = new WatchTable();
  const calls: string[] = [];
  const w = (name: string) => (e: ZkWatchEvent) => calls.push(`${name}:${e.type}`);
  const a = w("a");
  table.add("data", "/n", a);
  table.add("exist", "/n", a);
  table.add("child", "/n", a);
  table.add("child", "/n", w("b"));
  assert.deepEqual(table.paths(), { data: ["/n"], exist: ["/n"], child: ["/n"] });
  const dataChange = table.take("dataChanged", "/n");
  assert.equal(dataChange.size, 1, "a, once, though set two ways");
  assert.deepEqual(table.paths(), { data: [], exist: [], child: ["/n"] });
  assert.equal(table.take("childrenChanged", "/n").size, 2);
  table.add("data", "/m", a);
  table.add("child", "/m", a);
  assert.equal(table.take("deleted", "/m").size, 1);
  assert.equal(table.size, 0);
  assert.equal(table.take("created", "/none").size, 0);
});

test("zk errors: every ZooKeeper code has a name; unknown numbers are SystemError with the number", () => {
  for (const [name, n] of Object.entries(ZkErrorNumber)) assert.equal(zkErrorCode(n), name);
  assert.equal(zkErrorCode(-101), "NoNode");
  assert.equal(zkErrorCode(-999), "SystemError");
  const e = new ZkError("NodeExists", "/a");
  assert.equal(e.errno, -110);
  assert.equal(e.message, "NodeExists: /a");
});
