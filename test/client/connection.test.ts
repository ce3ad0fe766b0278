// KafkaConnection against small fake servers on the platform's own listener: answers that do not
// decode, trailing bytes, oversized frames, answers nobody asked for, answers out of order, a
// peer that closes, a port nobody listens on.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KafkaConnection, KafkaConnectionError } from "../../src/client/connection.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Connection, Listener, Platform } from "../../src/platform/types.ts";
import { ApiVersionsApi } from "../../src/protocol/api/mod.ts";
import { clientResponseBytesMax } from "../../src/util/limits.ts";

async function connect(platform: Platform, port: number): Promise<KafkaConnection> {
  return await KafkaConnection.connect(platform, { host: "127.0.0.1", port, clientId: "client-test" });
}

// ---- fake servers ---------------------------------------------------------------------------------

interface FakeServer {
  port: number;
  close(): Promise<void>;
}

/** A server that hands each request's correlation id (and the connection) to `onRequest`. */
async function fakeServer(platform: Platform, onRequest: (conn: Connection, correlationId: number) => void): Promise<FakeServer> {
  const conns: Connection[] = [];
  const listener: Listener = await platform.net.listen({ host: "127.0.0.1", port: 0 }, (conn) => {
    conns.push(conn);
    void (async () => {
      let buf = new Uint8Array(0);
      for (;;) {
        const chunk = await conn.read();
        if (chunk === null) return;
        const next = new Uint8Array(buf.length + chunk.length);
        next.set(buf);
        next.set(chunk, buf.length);
        buf = next;
        while (buf.length >= 4) {
          const size = new DataView(buf.buffer, buf.byteOffset).getInt32(0);
          if (buf.length < 4 + size) break;
          onRequest(conn, new DataView(buf.buffer, buf.byteOffset).getInt32(8));
          buf = buf.slice(4 + size);
        }
      }
    })();
  });
  return {
    port: listener.port,
    async close() {
      for (const c of conns) c.close();
      await listener.close();
    },
  };
}

function frameOf(...parts: number[][]): Uint8Array {
  const body = parts.flat();
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setInt32(0, body.length);
  out.set(body, 4);
  return out;
}

function int32(n: number): number[] {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n);
  return [...b];
}

test("KafkaConnection: an answer that does not decode rejects and closes", async () => {
  const platform = await loadPlatform();
  // ApiVersions v0 answer: error code, then an array length of 1000 with nothing after it.
  const server = await fakeServer(platform, (conn, id) => void conn.write(frameOf(int32(id), [0, 0], int32(1000))).catch(() => {}));
  const c = await connect(platform, server.port);
  try {
    await assert.rejects(c.request(ApiVersionsApi, 0, {}, 5_000), /malformed ApiVersions v0 response .*does not decode/);
    assert.equal(c.closed, true);
  } finally {
    c.close();
    await server.close();
  }
});

test("KafkaConnection: trailing bytes after an answer are malformed too", async () => {
  const platform = await loadPlatform();
  // ApiVersions v0: error 0, empty array, then two stray bytes.
  const server = await fakeServer(platform, (conn, id) => void conn.write(frameOf(int32(id), [0, 0], int32(0), [7, 7])).catch(() => {}));
  const c = await connect(platform, server.port);
  try {
    await assert.rejects(c.request(ApiVersionsApi, 0, {}, 5_000), /has 2 bytes after its end/);
  } finally {
    c.close();
    await server.close();
  }
});

test("KafkaConnection: a frame size past the bound closes before allocating", async () => {
  const platform = await loadPlatform();
  const server = await fakeServer(platform, (conn) => void conn.write(new Uint8Array(int32(clientResponseBytesMax + 1))).catch(() => {}));
  const c = await connect(platform, server.port);
  try {
    await assert.rejects(c.request(ApiVersionsApi, 0, {}, 5_000), /response frame size \d+ is outside 4\.\.104857600/);
    assert.equal(c.closed, true);
  } finally {
    c.close();
    await server.close();
  }
  // A caller's lower bound applies too.
  const small = await fakeServer(platform, (conn, id) => void conn.write(frameOf(int32(id), [0, 0], int32(0), new Array(100).fill(0))).catch(() => {}));
  const d = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: small.port, responseBytesMax: 64 });
  try {
    await assert.rejects(d.request(ApiVersionsApi, 0, {}, 5_000), /outside 4\.\.64/);
  } finally {
    d.close();
    await small.close();
  }
});

test("KafkaConnection: an answer nobody asked for closes the connection", async () => {
  const platform = await loadPlatform();
  const server = await fakeServer(platform, (conn, id) => void conn.write(frameOf(int32(id + 1000), [0, 0], int32(0))).catch(() => {}));
  const c = await connect(platform, server.port);
  try {
    await assert.rejects(c.request(ApiVersionsApi, 0, {}, 5_000), /which no request is waiting for/);
    assert.equal(c.closed, true);
  } finally {
    c.close();
    await server.close();
  }
});

test("KafkaConnection: a peer that closes fails every request in flight", async () => {
  const platform = await loadPlatform();
  let seen = 0;
  const server = await fakeServer(platform, (conn) => {
    if (++seen === 3) conn.close();
  });
  const c = await connect(platform, server.port);
  try {
    const results = await Promise.allSettled([0, 1, 2].map(() => c.request(ApiVersionsApi, 0, {}, 5_000)));
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.match(String((r as PromiseRejectedResult).reason), /closed by the peer/);
    }
    assert.equal(c.closed, true);
  } finally {
    c.close();
    await server.close();
  }
});

test("KafkaConnection: answers out of order are matched by correlation id", async () => {
  const platform = await loadPlatform();
  const held: { conn: Connection; id: number }[] = [];
  const server = await fakeServer(platform, (conn, id) => {
    held.push({ conn, id });
    if (held.length < 3) return;
    // Answer in reverse, each with its own error code to tell them apart.
    for (const h of held.reverse()) void h.conn.write(frameOf(int32(h.id), [0, h.id & 0x7f], int32(0))).catch(() => {});
  });
  const c = await connect(platform, server.port);
  try {
    const sent = [0, 1, 2].map(() => c.request(ApiVersionsApi, 0, {}, 5_000));
    const res = await Promise.all(sent);
    const codes = res.map((r) => r.errorCode as number);
    assert.equal(new Set(codes).size, 3);
    assert.deepEqual([...codes].sort((a, b) => a - b), codes, "each answer went to the request with its id (ids ascend)");
  } finally {
    c.close();
    await server.close();
  }
});

test("KafkaConnection: connecting to a closed port rejects with the address", async () => {
  const platform = await loadPlatform();
  const server = await fakeServer(platform, () => {});
  const port = server.port;
  await server.close();
  await assert.rejects(KafkaConnection.connect(platform, { host: "127.0.0.1", port, connectTimeoutMs: 2_000 }), (e: Error) => {
    assert.ok(e instanceof KafkaConnectionError);
    assert.match(e.message, new RegExp(`connect to 127\\.0\\.0\\.1:${port} failed`));
    return true;
  });
});
