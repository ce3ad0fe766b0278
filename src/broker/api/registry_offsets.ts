// Offsets of Kafka 0.8-style consumers (OffsetCommit v0, OffsetFetch v0), kept in the registry
// at /consumers/<group>/offsets/<topic>/<partition> as decimal text, exactly where ZooKeeper-based
// consumers and tools look for them.
import { ConsumerOffset, pathProblem, RegistryError } from "../../registry/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { BrokerServices } from "../services.ts";

/** A group id that is one registry path segment (ZooKeeper refuses control and reserved characters). */
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
    const path = ConsumerOffset.path(groupId, o.topic, o.partition);
    await s.registry.ensurePath(path);
    await s.registry.setData(path, ConsumerOffset.encode(o.offset));
    out.push({ errorCode: ErrorCode.NONE });
  }
  return out;
}

export async function fetchFromRegistry(s: BrokerServices, groupId: string, topic: string, partition: number) {
  if (!validGroupPath(groupId) || s.metadata.getTopic(topic) === undefined) return -1n;
  try {
    const { data } = await s.registry.getData(ConsumerOffset.path(groupId, topic, partition));
    return ConsumerOffset.decode(data) ?? -1n;
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return -1n;
    throw e;
  }
}
