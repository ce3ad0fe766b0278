// node:zlib (gzip and zstd), loaded at its first use instead of at start-up: evaluating it costs
// 30-50 ms of CPU under Bun, which every process paid (strand --version, a broker whose clients
// never compress) before its first line ran. process.getBuiltinModule (Node 22.3, Bun, Deno 2)
// loads a built-in synchronously, so the codecs stay synchronous; the type import costs nothing.
import type * as Zlib from "node:zlib";

let zlib: typeof Zlib | undefined;

export function nodeZlib(): typeof Zlib {
  const g = globalThis as unknown as { process: { getBuiltinModule(id: string): unknown } };
  return (zlib ??= g.process.getBuiltinModule("node:zlib") as typeof Zlib);
}
