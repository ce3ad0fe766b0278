// The other end for tls_bench.ts's "client in another process" figures: a Bun process with Bun's
// own sockets (native TLS), standing in for a Kafka client so the measured process does only the
// server's work. Usage: bun tls_peer.ts <port> <plain|tls> <send|recv> <MiB> [ca.pem]
// Sends or receives that many MiB, then closes; exits when the connection has closed.
import * as fs from "node:fs";

const [portText, mode, direction, mibText, caPath] = process.argv.slice(2);
const totalBytes = Number(mibText) * 1024 * 1024;
const chunk = new Uint8Array(64 * 1024).fill(7);
const tls = mode === "tls" ? { ca: fs.readFileSync(caPath, "utf8"), serverName: "localhost" } : undefined;
let sent = 0;
let partial = 0;
let received = 0;

// Bun's write takes what the kernel takes; the rest waits for drain.
function push(socket: { write(b: Uint8Array): number; end(): void }): void {
  while (sent < totalBytes) {
    const n = socket.write(chunk.subarray(partial));
    if (n < chunk.length - partial) {
      partial += Math.max(n, 0);
      return;
    }
    partial = 0;
    sent += chunk.length;
  }
  socket.end();
}

await new Promise<void>((done) => {
  Bun.connect({
    hostname: "127.0.0.1",
    port: Number(portText),
    ...(tls !== undefined ? { tls } : {}),
    socket: {
      open(s) {
        if (tls === undefined && direction === "send") push(s);
      },
      handshake(s) {
        if (direction === "send") push(s);
      },
      drain(s) {
        if (direction === "send") push(s);
      },
      data(s, d) {
        received += d.length;
        if (received >= totalBytes) s.end();
      },
      close() {
        done();
      },
    },
  }).catch((e) => {
    console.error(`tls_peer: ${e}`);
    process.exit(1);
  });
});
