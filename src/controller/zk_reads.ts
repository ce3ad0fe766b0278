// Registry reads the controller and the topic admin share: live brokers, topic assignments,
// partition states and topic configs, decoded from Kafka's znodes. Malformed nodes are logged
// and skipped by the callers, never fatal.

import {
  BrokerIdsZNode,
  BrokerIdZNode,
  type BrokerInfo,
  ConfigEntityZNode,
  ConfigType,
  type LeaderIsrAndControllerEpoch,
  type Registry,
  RegistryError,
  TopicPartitionStateZNode,
  TopicsZNode,
  type TopicIdReplicaAssignment,
  TopicZNode,
  type Watcher,
} from "../registry/mod.ts";

/** A live broker's registration with its epoch: the czxid of its /brokers/ids/<id> znode. */
export type BrokerRegistration = BrokerInfo & { epoch: bigint };

export async function readLiveBrokers(registry: Registry, watch?: Watcher): Promise<BrokerRegistration[]> {
  const ids = await registry.getChildren(BrokerIdsZNode.path, watch);
  const out: BrokerRegistration[] = [];
  for (const name of ids) {
    const id = Number(name);
    if (!Number.isInteger(id)) continue;
    const data = await getDataOrNull(registry, BrokerIdZNode.path(id));
    const info = data === null ? null : BrokerIdZNode.decode(id, data.data);
    if (info !== null && data !== null) out.push({ ...info, epoch: data.stat.czxid });
  }
  return out;
}

export async function readTopicNames(registry: Registry, watch?: Watcher): Promise<string[]> {
  return await registry.getChildren(TopicsZNode.path, watch);
}

export async function readAssignment(registry: Registry, topic: string): Promise<TopicIdReplicaAssignment | null> {
  const data = await getDataOrNull(registry, TopicZNode.path(topic));
  return data === null ? null : TopicZNode.decode(topic, data.data);
}

export async function readPartitionState(
  registry: Registry,
  topic: string,
  partition: number,
): Promise<LeaderIsrAndControllerEpoch | null> {
  const data = await getDataOrNull(registry, TopicPartitionStateZNode.path(topic, partition));
  return data === null ? null : TopicPartitionStateZNode.decode(data.data, data.stat);
}

/** A topic's config overrides as stored (none when the node is missing or malformed). */
export interface VersionedTopicConfig {
  configs: Record<string, string>;
  /** The config node's mzxid (-1 when it is missing): orders two reads of the same node. */
  zxid: bigint;
  /** The config node's data version (-1 when it is missing), for a conditional write. */
  version: number;
  exists: boolean;
}

export async function readTopicConfigVersioned(registry: Registry, topic: string): Promise<VersionedTopicConfig> {
  const data = await getDataOrNull(registry, ConfigEntityZNode.path(ConfigType.Topic, topic));
  if (data === null) return { configs: {}, zxid: -1n, version: -1, exists: false };
  const map = ConfigEntityZNode.decode(data.data);
  return { configs: map === null ? {} : Object.fromEntries(map), zxid: data.stat.mzxid, version: data.stat.version, exists: true };
}

export async function getDataOrNull(registry: Registry, path: string, watch?: Watcher) {
  try {
    return await registry.getData(path, watch);
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return null;
    throw e;
  }
}

/** Deletes path and everything under it, children first; missing nodes are fine. */
export async function deleteRecursive(registry: Registry, path: string): Promise<void> {
  let children: string[];
  try {
    children = await registry.getChildren(path);
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return;
    throw e;
  }
  for (const c of children) await deleteRecursive(registry, `${path}/${c}`);
  try {
    await registry.delete(path);
  } catch (e) {
    if (!(e instanceof RegistryError && e.code === "NoNode")) throw e;
  }
}
