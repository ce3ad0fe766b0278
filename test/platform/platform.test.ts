// Contract test for the Platform: the same checks run against bun.ts under Bun and deno.ts under
// Deno (loadPlatform picks by runtime). Real files in a temp dir, real sockets on 127.0.0.1.
// Each test is bounded by withDeadline and closes or removes everything it opened.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Connection, Listener, Platform } from "../../src/platform/mod.ts";
import { isHostName, withConnectTimeout } from "../../src/platform/shared.ts";

const platform: Platform = await loadPlatform();
const text = new TextEncoder();
const bytes = (s: string) => text.encode(s);

/** Runs fn with a fresh temp dir, removed afterwards whatever happens. */
async function withTempDir(fn: (dir: string) => void | Promise<void>): Promise<void> {
  const dir = nodeFs.mkdtempSync(nodePath.join(os.tmpdir(), "strand-platform-"));
  try {
    await fn(dir);
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Fails the test instead of hanging when a socket bug loses a wake-up. */
async function withDeadline<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`test exceeded its ${ms} ms deadline`)), ms);
  });
  try {
    return await Promise.race([fn(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Reads until n bytes have arrived (or EOF, which fails the caller's length check). */
async function readExactly(conn: Connection, n: number): Promise<Uint8Array> {
  const out = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const chunk = await conn.read();
    if (chunk === null) break;
    out.set(chunk.subarray(0, n - got), got);
    got += chunk.length;
  }
  assert.equal(got, n, "bytes before EOF");
  return out;
}

/** An echo server; tracks its connections so the test can close them all. */
async function echoServer(): Promise<{ listener: Listener; conns: Connection[]; close(): Promise<void> }> {
  const conns: Connection[] = [];
  const listener = await platform.net.listen({ host: "127.0.0.1", port: 0 }, (conn) => {
    conns.push(conn);
    (async () => {
      for (let chunk = await conn.read(); chunk !== null; chunk = await conn.read()) {
        await conn.write(chunk);
      }
      conn.close();
    })().catch(() => conn.close());
  });
  return {
    listener,
    conns,
    async close() {
      await listener.close();
      for (const c of conns) c.close();
    },
  };
}

test("platform: identity, process info, random bytes", () => {
  assert.ok(platform.name === "bun" || platform.name === "deno");
  assert.match(platform.version, /^\d+\.\d+\.\d+/);
  assert.ok(Number.isInteger(platform.process.pid) && platform.process.pid > 0);
  assert.ok(platform.process.hostname().length > 0);
  assert.equal(platform.process.env("STRAND_SURELY_UNSET_VARIABLE"), undefined);
  assert.ok(platform.process.env("PATH") !== undefined);
  assert.ok(platform.process.memoryRssBytes() > 1024 * 1024);

  // More than one getRandomValues call's worth, to cover the chunking.
  const r = new Uint8Array(200_000);
  platform.randomBytes(r);
  for (const off of [0, 65_536, 131_072, 199_000]) {
    assert.ok(r.subarray(off, off + 1000).some((b) => b !== 0), `random bytes at ${off}`);
  }
});

test("fs: file handle append, readAt, writeAt, size, truncate, sync, close", async () => {
  await withTempDir((dir) => {
    const path = `${dir}/00000000000000000000.log`;
    const f = platform.fs.open(path, "create-new");
    assert.equal(f.path, path);
    assert.equal(f.size(), 0);

    f.append(bytes("hello "));
    f.append(bytes("world"));
    assert.equal(f.size(), 11);
    const buf = new Uint8Array(11);
    assert.equal(f.readAt(buf, 0), 11);
    assert.deepEqual(buf, bytes("hello world"));

    // writeAt overwrites in place, and append continues at the end afterwards.
    f.writeAt(bytes("HELLO"), 0);
    f.append(bytes("!"));
    const all = new Uint8Array(64);
    assert.equal(f.readAt(all, 0), 12);
    assert.deepEqual(all.subarray(0, 12), bytes("HELLO world!"));

    // writeAt past the end grows the file (with a hole) and moves the append position.
    f.writeAt(bytes("X"), 20);
    assert.equal(f.size(), 21);
    f.append(bytes("Y"));
    assert.equal(f.size(), 22);
    const tail = new Uint8Array(10);
    assert.equal(f.readAt(tail, 18), 4);
    assert.deepEqual(tail.subarray(0, 4), new Uint8Array([0, 0, 0x58, 0x59]));

    // Reads at or past the end return 0.
    assert.equal(f.readAt(new Uint8Array(4), 22), 0);
    assert.equal(f.readAt(new Uint8Array(4), 1000), 0);

    f.truncate(5);
    assert.equal(f.size(), 5);
    f.append(bytes("-after"));
    const t = new Uint8Array(32);
    assert.equal(f.readAt(t, 0), 11);
    assert.deepEqual(t.subarray(0, 11), bytes("HELLO-after"));

    f.sync();
    f.close();
    f.close(); // idempotent

    // Reopened: the data is there, and append starts at the real end.
    const g = platform.fs.open(path, "readwrite");
    assert.equal(g.size(), 11);
    g.append(bytes("+"));
    g.close();
    const r = platform.fs.open(path, "read");
    assert.equal(r.size(), 12);
    const rb = new Uint8Array(12);
    assert.equal(r.readAt(rb, 0), 12);
    assert.deepEqual(rb, bytes("HELLO-after+"));
    r.close();
    assert.equal(platform.fs.stat(path)?.size, 12);
  });
});

test("fs: a read-only handle sees a writer's appends; large data round-trips", async () => {
  await withTempDir((dir) => {
    const path = `${dir}/big.log`;
    const w = platform.fs.open(path, "readwrite");
    const r = platform.fs.open(path, "read");
    const data = new Uint8Array(3 * 1024 * 1024 + 17);
    platform.randomBytes(data);
    w.append(data);
    assert.equal(r.size(), data.length);
    const back = new Uint8Array(data.length);
    assert.equal(r.readAt(back, 0), data.length);
    assert.deepEqual(back, data);
    w.close();
    r.close();
  });
});

test("fs: open modes refuse what they must", async () => {
  await withTempDir((dir) => {
    assert.throws(() => platform.fs.open(`${dir}/missing`, "read"));
    const f = platform.fs.open(`${dir}/exists`, "readwrite"); // created when missing
    f.close();
    assert.equal(platform.fs.stat(`${dir}/exists`)?.isFile, true);
    assert.throws(() => platform.fs.open(`${dir}/exists`, "create-new"));
    assert.throws(() => platform.fs.open(`${dir}/no/such/dir/file`, "readwrite"));
  });
});

test("fs: the async creation calls (mkdirpAsync, openAsync, renameAsync) act as their synchronous forms", async () => {
  await withTempDir(async (dir) => {
    const fs = platform.fs;
    await fs.mkdirpAsync(`${dir}/a/b/c`);
    await fs.mkdirpAsync(`${dir}/a/b/c`); // no error when it exists
    assert.ok(fs.stat(`${dir}/a/b/c`)?.isDirectory);

    const f = await fs.openAsync(`${dir}/a/new.log`, "create-new");
    f.append(bytes("hello"));
    f.writeAt(bytes("J"), 0);
    assert.equal(f.size(), 5);
    f.close();
    await assert.rejects(fs.openAsync(`${dir}/a/new.log`, "create-new"), "create-new refuses an existing file");
    await assert.rejects(fs.openAsync(`${dir}/a/missing`, "read"), "read needs the file");
    const rw = await fs.openAsync(`${dir}/a/new.log`, "readwrite");
    assert.equal(rw.size(), 5, "a writable handle starts at the file's end");
    rw.append(bytes("!"));
    rw.close();

    await fs.renameAsync(`${dir}/a/new.log`, `${dir}/a/b/moved.log`);
    assert.equal(fs.stat(`${dir}/a/new.log`), null);
    assert.equal(new TextDecoder().decode(fs.readFile(`${dir}/a/b/moved.log`)!), "Jello!");
    const r = await fs.openAsync(`${dir}/a/b/moved.log`, "read");
    const buf = new Uint8Array(6);
    assert.equal(r.readAt(buf, 0), 6);
    r.close();
  });
});

test("fs: readFile, writeFileAtomic, rename, remove, mkdirp, readdir, stat, syncDir", async () => {
  await withTempDir((dir) => {
    assert.equal(platform.fs.readFile(`${dir}/absent`), null);
    assert.equal(platform.fs.stat(`${dir}/absent`), null);
    assert.equal(platform.fs.stat(`${dir}/absent/deeper`), null);
    assert.deepEqual(platform.fs.readdir(`${dir}/absent`), []);

    const cp = `${dir}/recovery-point-offset-checkpoint`;
    platform.fs.writeFileAtomic(cp, bytes("0\n1\ntopic 0 42\n"));
    assert.deepEqual(platform.fs.readFile(cp), bytes("0\n1\ntopic 0 42\n"));
    platform.fs.writeFileAtomic(cp, bytes("0\n0\n"));
    const read = platform.fs.readFile(cp);
    assert.ok(read !== null);
    assert.equal(Object.getPrototypeOf(read), Uint8Array.prototype, "a plain Uint8Array, not a Buffer");
    assert.deepEqual(read, bytes("0\n0\n"));
    assert.deepEqual(platform.fs.readdir(dir), ["recovery-point-offset-checkpoint"], "no .tmp left behind");
    assert.deepEqual(platform.fs.readFile(`${dir}/empty`) ?? "absent", "absent");
    platform.fs.writeFileAtomic(`${dir}/empty`, new Uint8Array(0));
    assert.deepEqual(platform.fs.readFile(`${dir}/empty`), new Uint8Array(0));

    platform.fs.mkdirp(`${dir}/a/b/c`);
    platform.fs.mkdirp(`${dir}/a/b/c`); // exists: no error
    const st = platform.fs.stat(`${dir}/a/b`);
    assert.ok(st !== null && st.isDirectory && !st.isFile);
    platform.fs.writeFileAtomic(`${dir}/a/b/c/f`, bytes("x"));
    const fst = platform.fs.stat(`${dir}/a/b/c/f`);
    assert.ok(fst !== null && fst.isFile && !fst.isDirectory && fst.size === 1);
    assert.ok(Math.abs(fst.mtimeMs - Date.now()) < 60_000, "mtime is recent");

    platform.fs.rename(`${dir}/a/b/c/f`, `${dir}/a/g`);
    assert.deepEqual(platform.fs.readdir(`${dir}/a`).sort(), ["b", "g"]);
    assert.equal(platform.fs.stat(`${dir}/a/b/c/f`), null);
    platform.fs.syncDir(`${dir}/a`);

    // Directory rename, as deletion marks a partition dir (topic-0 -> topic-0.<id>-delete).
    platform.fs.rename(`${dir}/a/b`, `${dir}/a/b.deleted`);
    assert.deepEqual(platform.fs.readdir(`${dir}/a`).sort(), ["b.deleted", "g"]);

    platform.fs.remove(`${dir}/a/g`);
    platform.fs.remove(`${dir}/a`); // a tree
    platform.fs.remove(`${dir}/a`); // gone: no error
    assert.equal(platform.fs.stat(`${dir}/a`), null);
    assert.deepEqual(platform.fs.readdir(dir).sort(), ["empty", "recovery-point-offset-checkpoint"]);
  });
});

test("fs: statfs reports the volume's total and usable bytes, null for a missing path", async () => {
  await withTempDir((dir) => {
    const space = platform.fs.statfs(dir);
    assert.ok(space !== null);
    // The same figures node:fs reports for the same volume (usable space moves as other writers
    // write, so only within a margin).
    const ref = nodeFs.statfsSync(dir);
    const unit = (ref as { frsize?: number }).frsize ?? ref.bsize;
    assert.equal(space.totalBytes, ref.blocks * unit);
    assert.ok(Math.abs(space.usableBytes - ref.bavail * unit) < 1 << 30, "usable bytes close to node:fs's");
    assert.ok(space.totalBytes > 0 && space.usableBytes >= 0 && space.usableBytes <= space.totalBytes);
    assert.ok(Number.isSafeInteger(space.totalBytes) && Number.isSafeInteger(space.usableBytes));
    assert.equal(platform.fs.statfs(`${dir}/absent`), null);
    platform.fs.writeFileAtomic(`${dir}/f`, bytes("x"));
    assert.equal(platform.fs.statfs(`${dir}/f/below`), null, "a path through a file is missing");
  });
});

test("net: echo over 127.0.0.1 with a port chosen by the OS", async () => {
  await withDeadline(10_000, async () => {
    const server = await echoServer();
    let client: Connection | null = null;
    try {
      assert.ok(server.listener.port > 0, "the real port, not 0");
      assert.equal(server.listener.host, "127.0.0.1");
      client = await platform.net.connect({ host: "127.0.0.1", port: server.listener.port, timeoutMs: 5000 });
      assert.equal(client.remotePort, server.listener.port);
      assert.equal(client.remoteAddress, "127.0.0.1");
      assert.ok(client.localPort > 0);
      for (const msg of ["ping", "a somewhat longer message", "x"]) {
        await client.write(bytes(msg));
        assert.deepEqual(await readExactly(client, msg.length), bytes(msg));
      }
      await client.write(new Uint8Array(0)); // empty write is a no-op
      // Writes issued without awaiting each other still go out whole and in order.
      const burst = Array.from({ length: 3 }, (_, i) => new Uint8Array(300_000).fill(i + 1));
      const readingBurst = readExactly(client, 900_000);
      await Promise.all(burst.map((b) => client!.write(b)));
      const echoed = await readingBurst;
      for (let i = 0; i < 3; i++) {
        assert.ok(
          echoed.subarray(i * 300_000, (i + 1) * 300_000).every((b) => b === i + 1),
          `burst ${i} in order`,
        );
      }
      assert.equal(server.conns.length, 1);
      assert.equal(server.conns[0].localPort, server.listener.port);
      assert.equal(server.conns[0].remotePort, client.localPort);
    } finally {
      client?.close();
      await server.close();
    }
  });
});

test("net: 32 MiB each way, byte-exact, with backpressure while the server does not read", async () => {
  await withDeadline(120_000, async () => {
    const total = 32 * 1024 * 1024;
    const payload = new Uint8Array(total);
    platform.randomBytes(payload);

    let clientWritten = 0;
    let writtenWhenServerStarted = -1;
    let serverConn: Connection | null = null;
    let serverReceived = 0;
    let serverDone!: Promise<void>;
    const listener = await platform.net.listen({ host: "127.0.0.1", port: 0 }, (conn) => {
      serverConn = conn;
      serverDone = (async () => {
        // Not reading at first: the client's writes must stall instead of queueing 32 MiB.
        await sleep(300);
        writtenWhenServerStarted = clientWritten;
        while (serverReceived < total) {
          const chunk = await conn.read();
          assert.ok(chunk !== null, "server saw EOF early");
          assertSame(chunk, payload, serverReceived, "client -> server");
          serverReceived += chunk.length;
          await conn.write(chunk);
        }
      })();
    });
    const client = await platform.net.connect({ host: "127.0.0.1", port: listener.port });
    try {
      const reading = (async () => {
        let got = 0;
        while (got < total) {
          const chunk = await client.read();
          assert.ok(chunk !== null, "client saw EOF early");
          assertSame(chunk, payload, got, "server -> client");
          got += chunk.length;
        }
        return got;
      })();
      const writeBytes = 256 * 1024;
      for (let off = 0; off < total; off += writeBytes) {
        await client.write(payload.subarray(off, off + writeBytes));
        clientWritten = off + writeBytes;
      }
      assert.equal(await reading, total);
      await serverDone;
      assert.equal(serverReceived, total);
      assert.ok(
        writtenWhenServerStarted >= 0 && writtenWhenServerStarted < total / 2,
        `writes stalled while the server was not reading (${writtenWhenServerStarted} bytes were accepted)`,
      );
    } finally {
      client.close();
      (serverConn as Connection | null)?.close();
      await listener.close();
    }
  });
});

function assertSame(chunk: Uint8Array, payload: Uint8Array, at: number, what: string): void {
  assert.ok(at + chunk.length <= payload.length, `${what}: more bytes than sent`);
  for (let i = 0; i < chunk.length; i++) {
    if (chunk[i] !== payload[at + i]) assert.fail(`${what}: byte ${at + i} differs`);
  }
}

test("net: 50 connections at once", async () => {
  await withDeadline(20_000, async () => {
    const server = await echoServer();
    const clients: Connection[] = [];
    try {
      const connecting = Array.from(
        { length: 50 },
        () => platform.net.connect({ host: "127.0.0.1", port: server.listener.port, timeoutMs: 5000 }),
      );
      clients.push(...await Promise.all(connecting));
      await Promise.all(clients.map(async (c, i) => {
        const msg = bytes(`client ${i} says hello `.repeat(i + 1));
        await c.write(msg);
        assert.deepEqual(await readExactly(c, msg.length), msg);
      }));
      assert.equal(server.conns.length, 50);
      assert.equal(new Set(clients.map((c) => c.localPort)).size, 50);
    } finally {
      for (const c of clients) c.close();
      await server.close();
    }
  });
});

test("net: EOF, close and write-after-close", async () => {
  await withDeadline(10_000, async () => {
    const serverSide: Connection[] = [];
    const listener = await platform.net.listen({ host: "127.0.0.1", port: 0 }, (conn) => {
      serverSide.push(conn);
      (async () => {
        await conn.write(bytes("bye"));
        conn.close();
        conn.close(); // idempotent
      })().catch(() => {});
    });
    const clients: Connection[] = [];
    try {
      // The peer writes then closes: the data arrives, then read() answers null, and keeps doing so.
      const a = await platform.net.connect({ host: "127.0.0.1", port: listener.port });
      clients.push(a);
      assert.deepEqual(await readExactly(a, 3), bytes("bye"));
      assert.equal(await a.read(), null);
      assert.equal(await a.read(), null);
      // Writing to a connection the peer closed eventually fails (the first write may still
      // reach the kernel before the reset is known).
      await assert.rejects(async () => {
        for (let i = 0; i < 100; i++) {
          await a.write(new Uint8Array(64 * 1024));
          await sleep(5);
        }
      });
      a.close();

      // Our own close: a pending read answers null, writes reject, close is idempotent.
      const b = await platform.net.connect({ host: "127.0.0.1", port: listener.port });
      clients.push(b);
      assert.deepEqual(await readExactly(b, 3), bytes("bye"));
      const c = await platform.net.connect({ host: "127.0.0.1", port: listener.port });
      clients.push(c);
      const pending = c.read();
      c.close();
      c.close();
      const first = await pending;
      // "bye" may already have been queued before close(); after close nothing more is delivered.
      assert.ok(first === null || first.length <= 3);
      assert.equal(await c.read(), null);
      await assert.rejects(c.write(bytes("too late")));
    } finally {
      for (const c of clients) c.close();
      await listener.close();
    }
  });
});

test("net: the server sees null when the client closes", async () => {
  await withDeadline(10_000, async () => {
    let resolveSeen!: (v: Uint8Array | null) => void;
    const seen = new Promise<Uint8Array | null>((r) => (resolveSeen = r));
    let serverConn: Connection | null = null;
    const listener = await platform.net.listen({ host: "127.0.0.1", port: 0 }, (conn) => {
      serverConn = conn;
      (async () => {
        const first = await conn.read();
        assert.deepEqual(first, bytes("one"));
        resolveSeen(await conn.read());
      })().catch(() => resolveSeen(new Uint8Array([0xff])));
    });
    try {
      const client = await platform.net.connect({ host: "127.0.0.1", port: listener.port });
      await client.write(bytes("one"));
      await sleep(50);
      client.close();
      assert.equal(await seen, null);
      await assert.rejects(client.write(bytes("x")));
    } finally {
      (serverConn as Connection | null)?.close();
      await listener.close();
    }
  });
});

test("net: connecting to a closed port or a busy one fails", async () => {
  await withDeadline(15_000, async () => {
    const listener = await platform.net.listen({ host: "127.0.0.1", port: 0 }, (conn) => conn.close());
    const port = listener.port;
    // The port is in use: a second listener on it must fail.
    await assert.rejects(platform.net.listen({ host: "127.0.0.1", port }, (conn) => conn.close()), (err: Error) => {
      assert.equal(err.message, `cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)`);
      return true;
    });
    await listener.close();
    await listener.close(); // idempotent
    await assert.rejects(platform.net.connect({ host: "127.0.0.1", port }), (err: Error) => {
      assert.ok(err.message.includes(`127.0.0.1:${port}`), `the error names the peer: ${err.message}`);
      return true;
    });
    await assert.rejects(platform.net.connect({ host: "127.0.0.1", port, timeoutMs: 2000 }));
  });
});

// A peer that never answers a SYN cannot be staged portably (no firewall rules in tests, and
// "unroutable" addresses answer on some networks), so the timeout race is checked on its own.
test("net: connect timeout gives up in time and closes a connection that arrives late", async () => {
  await withDeadline(5_000, async () => {
    let aborted = false;
    const never = new Promise<{ close(): void }>(() => {});
    const t0 = performance.now();
    await assert.rejects(withConnectTimeout(never, 50, "peer:1", () => (aborted = true)), /timed out/);
    assert.ok(performance.now() - t0 >= 45);
    assert.ok(aborted, "the attempt was cancelled");

    let lateClosed = false;
    const lateConn = { close: () => (lateClosed = true) };
    let arrive!: () => void;
    const late = new Promise<typeof lateConn>((resolve) => (arrive = () => resolve(lateConn)));
    await assert.rejects(withConnectTimeout(late, 20, "peer:2"), /timed out/);
    arrive();
    await sleep(10);
    assert.ok(lateClosed, "a connection arriving after the timeout is closed, not leaked");

    const onTime = { close: () => assert.fail("an on-time connection must not be closed") };
    assert.equal(await withConnectTimeout(Promise.resolve(onTime), 1000, "peer:3"), onTime);
  });
});

test("clock: wall and monotonic time, timers fire and cancel", async () => {
  await withDeadline(5_000, async () => {
    const { clock } = platform;
    assert.ok(Math.abs(clock.nowMs() - Date.now()) < 1000);
    let last = clock.monotonicMs();
    for (let i = 0; i < 10_000; i++) {
      const now = clock.monotonicMs();
      assert.ok(now >= last, "monotonic never goes backwards");
      last = now;
    }

    const t0 = clock.monotonicMs();
    const fired = await new Promise<number>((resolve) =>
      clock.setTimeout(() => resolve(clock.monotonicMs()), 30)
    );
    assert.ok(fired - t0 >= 25, `timeout fired after ${fired - t0} ms`);

    let cancelledFired = false;
    const cancelled = clock.setTimeout(() => (cancelledFired = true), 10);
    cancelled.cancel();

    let ticks = 0;
    await new Promise<void>((resolve) => {
      const interval = clock.setInterval(() => {
        ticks += 1;
        if (ticks === 3) {
          interval.cancel();
          resolve();
        }
      }, 5);
    });
    await sleep(40);
    assert.equal(ticks, 3, "a cancelled interval stops");
    assert.equal(cancelledFired, false, "a cancelled timeout does not fire");
  });
});

test("http: serve answers requests through the handler; a throwing handler gets a plain 500", async () => {
  await withDeadline(10_000, async () => {
    const server = await platform.http.serve({ host: "127.0.0.1", port: 0 }, async (req) => {
      const url = new URL(req.url);
      if (url.pathname === "/throw") throw new Error("handler bug");
      if (url.pathname === "/reject") return Promise.reject(new Error("async handler bug"));
      const body = req.method === "POST" ? await req.text() : "";
      return new Response(JSON.stringify({ method: req.method, path: url.pathname, query: url.search, auth: req.headers.get("authorization"), body }), {
        status: url.pathname === "/created" ? 201 : 200,
        headers: { "content-type": "application/json", "x-strand": "yes" },
      });
    });
    try {
      assert.equal(server.host, "127.0.0.1");
      assert.ok(server.port > 0, "a real port when 0 was asked for");
      const base = `http://127.0.0.1:${server.port}`;
      const get = await fetch(`${base}/a/b?x=1`, { headers: { authorization: "Bearer t" } });
      assert.equal(get.status, 200);
      assert.equal(get.headers.get("x-strand"), "yes");
      assert.deepEqual(await get.json(), { method: "GET", path: "/a/b", query: "?x=1", auth: "Bearer t", body: "" });
      const big = "é".repeat(100_000);
      const post = await fetch(`${base}/created`, { method: "POST", body: big });
      assert.equal(post.status, 201);
      assert.equal(((await post.json()) as { body: string }).body, big, "a request body arrives whole");
      for (const path of ["/throw", "/reject"]) {
        const bad = await fetch(base + path);
        assert.equal(bad.status, 500, path);
        assert.doesNotMatch(await bad.text(), /handler bug/, "no details leak");
      }
    } finally {
      await server.close();
    }
  });
});

test("http: a busy port is refused; close lets a request in flight finish, then refuses connections", async () => {
  await withDeadline(10_000, async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((r) => (release = r));
    let arrived: () => void = () => {};
    const inFlight = new Promise<void>((r) => (arrived = r));
    const server = await platform.http.serve({ host: "127.0.0.1", port: 0 }, async () => {
      arrived();
      await released;
      return new Response("finished");
    });
    await assert.rejects(platform.http.serve({ host: "127.0.0.1", port: server.port }, () => new Response("")));
    const base = `http://127.0.0.1:${server.port}`;
    const slow = fetch(base).then(async (r) => [r.status, await r.text()]);
    await inFlight;
    const closing = server.close();
    await sleep(20);
    release();
    assert.deepEqual(await slow, [200, "finished"]);
    await closing;
    await assert.rejects(fetch(base), "connections refused after close");
  });
});

test("platform: resolveHost looks up well-formed host names only, and answers null for what does not resolve", async () => {
  // localhost resolves through /etc/hosts on every machine the tests run on: no network needed.
  const local = await platform.resolveHost("localhost");
  assert.ok(local === "127.0.0.1" || local === "::1", `localhost resolved to ${local}`);
  // A name a client made up (the fuzzer, an attacker) is refused before any lookup.
  for (const bad of ["", "a b", "-lead.example", "trail-.example", "x".repeat(64), `${"a.".repeat(127)}ab`, "under_score", "ünï"]) {
    assert.equal(isHostName(bad), false, JSON.stringify(bad));
    const started = performance.now();
    assert.equal(await platform.resolveHost(bad), null, JSON.stringify(bad));
    assert.ok(performance.now() - started < 50, `${JSON.stringify(bad)} was looked up`);
  }
  for (const good of ["localhost", "a", "kafka-1.example.com", "x".repeat(63), "host.example."]) assert.ok(isHostName(good), good);
  // RFC 6761 reserves .invalid: it never resolves, whatever the resolver.
  assert.equal(await platform.resolveHost("no-such-host.invalid"), null);
});
