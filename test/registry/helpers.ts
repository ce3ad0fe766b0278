// Test helpers for the registry: the real platform, temp dirs, and watch recorders that work the
// same against the embedded store and a real ZooKeeper (events arrive asynchronously in both).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FileHandle, type FileSystem, loadPlatform, type Platform } from "../../src/platform/mod.ts";
import { journalFileName, type Registry, type RegistryPlatform, type Watcher, type WatchEvent } from "../../src/registry/mod.ts";

let platform: Promise<Platform> | null = null;

export function testPlatform(): Promise<Platform> {
  platform ??= loadPlatform();
  return platform;
}

/** A fresh directory; removed by the returned cleanup. */
export function tempDir(prefix = "strand-registry-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
export const str = (b: Uint8Array): string => new TextDecoder().decode(b);

/** A watcher that records every call. */
export interface Recorder {
  watcher: Watcher;
  events: WatchEvent[];
}

export function recorder(log?: string[], name?: string): Recorder {
  const events: WatchEvent[] = [];
  const watcher: Watcher = (ev) => {
    events.push(ev);
    if (log && name) log.push(`${name}:${ev.type}:${ev.path}`);
  };
  return { watcher, events };
}

/**
 * Lets pending watch events arrive. A read on each watching session comes back after every
 * notification the server queued before it (ZooKeeper answers a session in order), then a short
 * pause lets the client's event dispatch run.
 */
export async function settle(...sessions: Registry[]): Promise<void> {
  for (const s of sessions) await s.exists("/");
  await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Waits until cond holds, or fails after timeoutMs (for events from another session). */
export async function eventually(cond: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Runs body with a temp dir and the real platform; the dir is removed afterwards. */
export async function withDir(body: (dir: string, platform: RegistryPlatform) => Promise<void>): Promise<void> {
  const { dir, cleanup } = tempDir();
  try {
    await body(dir, await testPlatform());
  } finally {
    cleanup();
  }
}

/**
 * The platform with an fs whose journal appends and fsyncs are counted and can be made to fail
 * (a failing append writes half its bytes first, as a full disk would), and whose
 * snapshot rewrites (writeFileAtomic, or close()'s async rename of snapshot.json) are counted.
 */
export function instrumented(platform: RegistryPlatform) {
  const state = { writes: 0, syncs: 0, snapshots: 0, failWrites: false, failSyncs: false };
  const fs: FileSystem = Object.create(platform.fs);
  fs.writeFileAtomic = (path: string, data: Uint8Array) => {
    state.snapshots++;
    platform.fs.writeFileAtomic(path, data);
  };
  // close() writes its snapshot with the async calls; its rename into place is the rewrite.
  fs.renameAsync = async (from: string, to: string) => {
    if (to.endsWith("/snapshot.json")) state.snapshots++;
    await platform.fs.renameAsync(from, to);
  };
  fs.open = (path, mode) => {
    const handle = platform.fs.open(path, mode);
    if (!path.endsWith(journalFileName)) return handle;
    const wrapped: FileHandle = {
      path: handle.path,
      readAt: (buf, position) => handle.readAt(buf, position),
      append: (data) => {
        if (state.failWrites) {
          handle.append(data.subarray(0, data.length >> 1));
          throw new Error("ENOSPC: no space left on device");
        }
        state.writes++;
        handle.append(data);
      },
      writeAt: (data, position) => handle.writeAt(data, position),
      size: () => handle.size(),
      truncate: (size) => handle.truncate(size),
      sync: () => {
        if (state.failSyncs) throw new Error("EIO: i/o error");
        state.syncs++;
        handle.sync();
      },
      syncAsync: async () => {
        if (state.failSyncs) throw new Error("EIO: i/o error");
        state.syncs++;
        await (handle.syncAsync?.() ?? handle.sync());
      },
      close: () => handle.close(),
    };
    return wrapped;
  };
  return { platform: { clock: platform.clock, fs }, state };
}

