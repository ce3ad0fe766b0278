// Offsets of Kafka 0.8-style consumers (OffsetCommit v0, OffsetFetch v0), kept in the registry
// at /consumers/<group>/offsets/<topic>/<partition> as decimal text, exactly where ZooKeeper-based
// consumers and tools look for them.
import { logRegistryWriteFailure, registryWriteFailure, topicNameError } from "../../controller/mod.ts";
import { ConsumerOffset, pathProblem, RegistryError } from "../../registry/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { BrokerServices } from "../services.ts";

/** The group id is one znode name: no "/", not "." or "..", nothing ZooKeeper refuses in a path. */
function validGroupPath(groupId: string): boolean {
  return groupId !== "" && !groupId.includes("/") && pathProblem(`/${groupId}`) === null;
}

export async function commitToRegistry(
  s: BrokerServices,
  groupId: string,
  offsets: { topic: string; partition: number; offset: bigint }[],
): Promise<{ errorCode: number }[]> {
  if (!validGroupPath(groupId)) return offsets.map(() => ({ errorCode: ErrorCode.INVALID_GROUP_ID }));
  const out: { errorCode: number }[] = [];
  for (const o of offsets) {
    // The topic becomes a path segment: only a legal topic name may ("..", "a/b" may not).
    if (topicNameError(o.topic) !== null || o.partition < 0) {
      out.push({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
      continue;
    }
    const path = ConsumerOffset.path(groupId, o.topic, o.partition);
    try {
      await s.registry.ensurePath(path);
      await s.registry.setData(path, ConsumerOffset.encode(o.offset));
      out.push({ errorCode: ErrorCode.NONE });
    } catch (e) {
      // The registry's disk is full: this offset is not committed (the one stored stays).
      const f = registryWriteFailure(e, `offset of ${o.topic}-${o.partition} for group ${groupId} not committed`);
      if (f === null) throw e;
      logRegistryWriteFailure(s.logger, f, { group: groupId, topic: o.topic, partition: o.partition }, s.clock.monotonicMs());
      out.push({ errorCode: f.errorCode });
    }
  }
  return out;
}

export async function fetchFromRegistry(s: BrokerServices, groupId: string, topic: string, partition: number) {
  if (!validGroupPath(groupId) || topicNameError(topic) !== null || partition < 0 || s.metadata.getTopic(topic) === undefined) return -1n;
  try {
    const { data } = await s.registry.getData(ConsumerOffset.path(groupId, topic, partition));
    return ConsumerOffset.decode(data) ?? -1n;
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return -1n;
    throw e;
  }
}
