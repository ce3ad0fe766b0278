// The other brokers' admin APIs, for the cluster-wide views (cluster_views.ts) and
// `strand cluster rolling-restart`: each broker's admin server publishes where it answers in the
// ephemeral /strand/admin_endpoints/<id> (znodes.ts; embedded registry or ZooKeeper alike, again
// in every new session), and any broker reads them back.
//
// Invariants:
// - A wildcard admin listener (0.0.0.0, ::) is published under the broker's advertised host, so a
//   peer gets an address it can dial; a loopback one is published as it is (it serves the brokers
//   of the same host, as in tests). Every admin answer carries `x-strand-broker-id` (app.ts), and
//   a peer answer from another broker than the one asked (a loopback URL dialled from elsewhere)
//   is refused, never shown as that broker's.
// - Every request to a peer is bounded by adminPeerRequestMs: a down or hung broker costs the page
//   that long once, in parallel with the others, and shows as unreachable.
// - The admin API's reads are open (app.ts), so no token is sent; a token configured here is
//   forwarded all the same, so peers that some day guard reads still answer their own cluster.

import type { BrokerServices } from "../broker/mod.ts";
import { AdminEndpointZNode, RegistryError } from "../registry/mod.ts";
import { adminPeerRequestMs, type Logger } from "../util/mod.ts";

/** The response header naming the broker that answered (set on every admin answer). */
export const brokerIdHeader = "x-strand-broker-id";

const wildcardHosts = new Set(["0.0.0.0", "::", "0:0:0:0:0:0:0:0", ""]);

/** The URLs this broker's admin listeners are reached at, for its peers. */
export function publishedAdminUrls(s: BrokerServices, listeners: { host: string; port: number; tls?: true }[]): string[] {
  const advertised = s.config.advertisedListeners[0]?.host || s.config.listeners[0]?.host || "";
  return listeners.map((l) => {
    const host = wildcardHosts.has(l.host) && advertised !== "" && !wildcardHosts.has(advertised) ? advertised : l.host;
    return `${l.tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${l.port}`;
  });
}

/**
 * Publishes this broker's admin URLs in /strand/admin_endpoints/<id> now and in every new registry
 * session; returns a function that stops and deletes the znode (best effort: it is ephemeral).
 */
export function publishAdminEndpoint(s: BrokerServices, urls: string[], logger: Logger): () => Promise<void> {
  if (urls.length === 0) return () => Promise.resolve();
  const registry = s.registry;
  const path = AdminEndpointZNode.path(s.brokerId);
  let stopped = false;
  const publish = async () => {
    await registry.ensurePath(AdminEndpointZNode.parentPath);
    for (let attempt = 0; attempt < 3 && !stopped; attempt++) {
      try {
        await registry.create(path, AdminEndpointZNode.encode(urls), "ephemeral");
        return;
      } catch (e) {
        if (!(e instanceof RegistryError && e.code === "NodeExists")) throw e;
        // Left by this broker's previous process (its session not expired yet), or our own from
        // before a new session: ours to replace.
        await registry.delete(path).catch(() => {});
      }
    }
  };
  const run = () =>
    void publish().catch((e) => logger.warn({ znode: path, err: (e as Error).message }, "cannot publish the admin API's address: other brokers' dashboards will not reach this one"));
  run();
  const unsubscribe = registry.onNewSession(run);
  return async () => {
    stopped = true;
    unsubscribe();
    await registry.delete(path).catch(() => {});
  };
}

/**
 * The last reading of the published URLs per broker, reused for peerUrlsCacheMs: a dashboard poll
 * asks for them once per group shown, and the registry need not be read that often.
 */
const peerUrlsCacheMs = 1_000;
const peerUrlsCache = new WeakMap<BrokerServices, { atMs: number; urls: Promise<Map<number, string>> }>();

/** Live brokers' published admin URLs (the first of each), this broker's own included. */
export function peerAdminUrls(s: BrokerServices): Promise<Map<number, string>> {
  const now = s.clock.monotonicMs();
  const cached = peerUrlsCache.get(s);
  if (cached !== undefined && now - cached.atMs < peerUrlsCacheMs) return cached.urls;
  const urls = readPeerAdminUrls(s);
  peerUrlsCache.set(s, { atMs: now, urls });
  urls.catch(() => peerUrlsCache.delete(s));
  return urls;
}

async function readPeerAdminUrls(s: BrokerServices): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  let names: string[];
  try {
    names = await s.registry.getChildren(AdminEndpointZNode.parentPath);
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return out;
    throw e;
  }
  await Promise.all(names.map(async (name) => {
    const id = Number(name);
    if (!Number.isInteger(id) || s.metadata.getBroker(id) === undefined) return;
    try {
      const urls = AdminEndpointZNode.decode((await s.registry.getData(AdminEndpointZNode.path(id))).data);
      if (urls !== null && urls.length > 0) out.set(id, urls[0]);
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NoNode")) throw e;
    }
  }));
  return out;
}

/** GET a peer's admin JSON route, bounded in time and checked to come from broker `id`. */
export async function getPeerJson(baseUrl: string, path: string, id: number, token: string | null): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${baseUrl}${path}`, { headers, signal: AbortSignal.timeout(adminPeerRequestMs) });
  const from = res.headers.get(brokerIdHeader);
  if (from !== String(id)) {
    await res.body?.cancel();
    throw new Error(`${baseUrl} answered as broker ${from ?? "unknown"}, not ${id}`);
  }
  if (!res.ok) {
    let why = `${res.status}`;
    try {
      why = ((await res.json()) as { error?: string }).error ?? why;
    } catch {
      // not JSON
    }
    const err = new Error(`${path}: ${why}`) as Error & { status?: number };
    err.status = res.status;
    throw err;
  }
  return await res.json();
}
