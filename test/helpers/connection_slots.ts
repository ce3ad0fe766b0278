// Connections against the broker's connection limits (src/broker/connection_quotas.ts): served()
// says whether a new connection is answered at once; heldForSlot() opens one that the broker holds,
// unread, until max.connections or its listener's limit has a slot, and hands back its pending
// answer, to check later that it is served once a slot frees. alterBroker() changes the dynamic
// broker configs (the limits among them) with IncrementalAlterConfigs.
import { ApiVersionsApi, IncrementalAlterConfigsApi } from "../../src/protocol/api/mod.ts";
import type { TestBroker } from "./broker.ts";
import { WireClient } from "./wire.ts";

const apiVersions = { clientSoftwareName: "t", clientSoftwareVersion: "1" };

/** Opens a connection (kept in `open`) and says whether ApiVersions is answered on it. */
export async function served(port: number, open: WireClient[], host = "127.0.0.1"): Promise<boolean> {
  const c = await WireClient.connect(port, host);
  open.push(c);
  try {
    return (await c.request(ApiVersionsApi, 3, apiVersions, 10_000)).errorCode === 0;
  } catch {
    return false;
  }
}

/** Whether an open connection still answers ApiVersions. */
export async function stillServed(c: WireClient): Promise<boolean> {
  try {
    return (await c.request(ApiVersionsApi, 3, apiVersions, 10_000)).errorCode === 0;
  } catch {
    return false;
  }
}

/**
 * Opens a connection, sends ApiVersions, and waits (up to 10 s) until the broker holds one more
 * connection waiting for a slot; throws if it does not. Resolves to the pending answer (true once
 * served; false if closed or unanswered within 60 s).
 */
export async function heldForSlot(b: TestBroker, port: number, open: WireClient[]): Promise<{ answered: Promise<boolean>; c: WireClient }> {
  const before = b.broker.networkStats().connectionsWaitingForSlot;
  const c = await WireClient.connect(port);
  open.push(c);
  const answered = c.request(ApiVersionsApi, 3, apiVersions, 60_000).then((r) => r.errorCode === 0, () => false);
  for (let i = 0; i < 500 && b.broker.networkStats().connectionsWaitingForSlot <= before; i++) await new Promise((r) => setTimeout(r, 20));
  if (b.broker.networkStats().connectionsWaitingForSlot <= before) throw new Error("the connection was not held waiting for a slot");
  return { answered, c };
}

export type Alteration = [name: string, op: number, value: string | null];

/** IncrementalAlterConfigs on a BROKER resource ("0", or "" for the cluster default): its outcome. */
export async function alterBroker(c: WireClient, resourceName: string, ops: Alteration[]): Promise<{ errorCode: number; errorMessage: string | null }> {
  const res = await c.request(IncrementalAlterConfigsApi, 1, {
    resources: [{ resourceType: 4, resourceName, configs: ops.map(([name, configOperation, value]) => ({ name, configOperation, value })) }],
    validateOnly: false,
  });
  const r = (res.responses as { errorCode: number; errorMessage: string | null }[])[0];
  return { errorCode: r.errorCode, errorMessage: r.errorMessage };
}
