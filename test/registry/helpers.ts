// Test helpers for the registry: the real platform, temp dirs, and watch recorders that work the
// same against the embedded store and a real ZooKeeper (events arrive asynchronously in both).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPlatform, type Platform } from "../../src/platform/mod.ts";
import type { Registry, Watcher, WatchEvent } from "../../src/registry/mod.ts";

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
