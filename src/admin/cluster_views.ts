// The cluster as one broker's admin API shows it, whichever broker serves the page: brokers with
// the address of their admin API and whether it answers, consumer groups of every coordinator with
// their lag, and each broker's counters for rates. Brokers and partitions (leader, ISR) come from
// this broker's metadata (the controller's UpdateMetadata keeps it whole); groups and counters
// from the other brokers' admin APIs (peers.ts), asked in parallel, each bounded in time, so a down
// broker shows as unreachable instead of hanging the page.
//
//   GET /v1/cluster/brokers      every live broker: id, host, port, rack, controller, admin_url, reachable
//   GET /v1/cluster/groups       every coordinator's groups, each with coordinator_id; brokers not answering
//   GET /v1/cluster/groups/{g}   the group from its coordinator (the leader of its __consumer_offsets
//                                partition), lag filled in from each partition's leader
//   GET /v1/cluster/stats        /v1/stats of every broker (null with an error for one not answering)
//
// A group's lag on its coordinator is known only for the partitions the coordinator leads; the
// others' high watermarks are read from their leaders (/v1/topics/{t}/partitions).

import type { Hono } from "hono";
import type { BrokerServices } from "../broker/mod.ts";
import { partitionForGroup } from "../coordinator/mod.ts";
import { getPeerJson, peerAdminUrls } from "./peers.ts";
import { brokersView, groupsView, lookupGroup, type OffsetWithLag, statsView } from "./views.ts";

type Services = () => BrokerServices;

interface Unreachable {
  broker_id: number;
  error: string;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Runs `local` for this broker and `remote(url)` for each other live broker, in parallel; a
 * broker without a published admin API or not answering in time goes to `unreachable`.
 */
async function everyBroker<T>(
  s: BrokerServices,
  local: () => T,
  remote: (url: string, id: number) => Promise<T>,
): Promise<{ answers: { broker_id: number; value: T }[]; unreachable: Unreachable[] }> {
  const urls = await peerAdminUrls(s);
  const answers: { broker_id: number; value: T }[] = [];
  const unreachable: Unreachable[] = [];
  const ids = s.metadata.aliveBrokers().map((b) => b.id).sort((a, b) => a - b);
  if (!ids.includes(s.brokerId)) ids.unshift(s.brokerId);
  await Promise.all(ids.map(async (id) => {
    if (id === s.brokerId) return void answers.push({ broker_id: id, value: local() });
    const url = urls.get(id);
    if (url === undefined) return void unreachable.push({ broker_id: id, error: "its admin API address is not published (admin.listeners empty, or not registered yet)" });
    try {
      answers.push({ broker_id: id, value: await remote(url, id) });
    } catch (e) {
      unreachable.push({ broker_id: id, error: message(e) });
    }
  }));
  answers.sort((a, b) => a.broker_id - b.broker_id);
  unreachable.sort((a, b) => a.broker_id - b.broker_id);
  return { answers, unreachable };
}

export function mountClusterRoutes(app: Hono, services: Services, token: string | null): void {
  app.get("/v1/cluster/brokers", async (c) => {
    const s = services();
    const urls = await peerAdminUrls(s);
    const reachable = new Map<number, string | null>();
    await Promise.all([...urls].map(async ([id, url]) => {
      if (id === s.brokerId) return void reachable.set(id, null);
      try {
        await getPeerJson(url, "/v1/status/live", id, token);
        reachable.set(id, null);
      } catch (e) {
        reachable.set(id, message(e));
      }
    }));
    return c.json(brokersView(s).map((b) => {
      const error = reachable.has(b.id) ? reachable.get(b.id)! : b.id === s.brokerId ? null : "its admin API address is not published";
      return { ...b, admin_url: urls.get(b.id) ?? null, admin_reachable: error === null, admin_error: error };
    }));
  });

  app.get("/v1/cluster/groups", async (c) => {
    const s = services();
    const r = await everyBroker(s, () => groupsView(s), async (url, id) => (await getPeerJson(url, "/v1/groups", id, token)) as ReturnType<typeof groupsView>);
    const groups = r.answers.flatMap((a) => a.value.map((g) => ({ ...g, coordinator_id: a.broker_id })));
    groups.sort((a, b) => (a.group_id < b.group_id ? -1 : a.group_id > b.group_id ? 1 : a.coordinator_id - b.coordinator_id));
    return c.json({ groups, unreachable: r.unreachable });
  });

  app.get("/v1/cluster/groups/:group", async (c) => {
    const s = services();
    const groupId = c.req.param("group");
    const offsetsTopic = s.metadata.getTopic("__consumer_offsets");
    if (offsetsTopic === undefined || offsetsTopic.partitions.length === 0) return c.json({ error: `unknown group ${groupId}` }, 404);
    const p = partitionForGroup(groupId, offsetsTopic.partitions.length);
    const coordinator = offsetsTopic.partitions.find((x) => x.partition === p)?.leader ?? -1;
    if (coordinator < 0) return c.json({ error: `group ${groupId}'s coordinator (__consumer_offsets-${p}) has no leader` }, 503);
    let view: ReturnType<typeof lookupGroupView>;
    if (coordinator === s.brokerId) {
      view = lookupGroupView(s, groupId);
      if (view === null) return c.json({ error: `unknown group ${groupId}` }, 404);
    } else {
      const url = (await peerAdminUrls(s)).get(coordinator);
      if (url === undefined) return c.json({ error: `the admin API of broker ${coordinator}, the group's coordinator, is not published` }, 503);
      try {
        view = (await getPeerJson(url, `/v1/groups/${encodeURIComponent(groupId)}`, coordinator, token)) as NonNullable<typeof view>;
      } catch (e) {
        const status = (e as { status?: number }).status === 404 ? 404 : 503;
        return c.json({ error: `broker ${coordinator} (the group's coordinator): ${message(e)}` }, status);
      }
    }
    return c.json(await withLeadersLag(s, view!, token));
  });

  app.get("/v1/cluster/stats", async (c) => {
    const s = services();
    const r = await everyBroker(s, () => statsView(s), async (url, id) => (await getPeerJson(url, "/v1/stats", id, token)) as ReturnType<typeof statsView>);
    const brokers = [
      ...r.answers.map((a) => ({ broker_id: a.broker_id, stats: a.value, error: null as string | null })),
      ...r.unreachable.map((u) => ({ broker_id: u.broker_id, stats: null, error: u.error })),
    ].sort((a, b) => a.broker_id - b.broker_id);
    return c.json({ brokers });
  });
}

function lookupGroupView(s: BrokerServices, groupId: string) {
  const found = lookupGroup(s, groupId);
  return found.found ? found.view : null;
}

type GroupView = NonNullable<ReturnType<typeof lookupGroupView>>;

/** The group's offsets with every partition's lag: high watermarks the coordinator lacks come from the leaders. */
async function withLeadersLag(s: BrokerServices, view: GroupView, token: string | null): Promise<GroupView> {
  const missing = view.offsets.filter((o) => o.high_watermark === null);
  if (missing.length === 0) return view;
  const urls = await peerAdminUrls(s);
  // One request per (leader, topic), all in parallel.
  const wanted = new Map<string, { leader: number; topic: string }>();
  for (const o of missing) {
    const leader = s.metadata.getTopic(o.topic)?.partitions.find((p) => p.partition === o.partition)?.leader ?? -1;
    if (leader >= 0) wanted.set(`${leader}\u0000${o.topic}`, { leader, topic: o.topic });
  }
  const hws = new Map<string, number>();
  await Promise.all([...wanted.values()].map(async ({ leader, topic }) => {
    const url = urls.get(leader);
    if (url === undefined) return;
    try {
      const parts = (await getPeerJson(url, `/v1/topics/${encodeURIComponent(topic)}/partitions`, leader, token)) as { partition: number; leader: number | null; high_watermark: number | null }[];
      for (const p of parts) if (p.leader === leader && p.high_watermark !== null) hws.set(`${topic}\u0000${p.partition}`, p.high_watermark);
    } catch {
      // That leader does not answer: its partitions' lag stays unknown (null).
    }
  }));
  const offsets: OffsetWithLag[] = view.offsets.map((o) => {
    if (o.high_watermark !== null) return o;
    const hw = hws.get(`${o.topic}\u0000${o.partition}`) ?? null;
    const lag = hw === null || typeof o.committed_offset !== "number" ? null : Math.max(0, hw - o.committed_offset);
    return { ...o, high_watermark: hw, lag };
  });
  const lags = offsets.map((o) => o.lag).filter((l): l is number => l !== null);
  return { ...view, offsets, total_lag: lags.reduce((a, b) => a + b, 0) };
}
