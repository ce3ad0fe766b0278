// The controller-to-broker requests (LeaderAndIsr, UpdateMetadata, StopReplica) name topics and
// partitions that become log dirs, registry paths and metadata entries. Kafka trusts its
// controller and checks nothing; strand checks that each name is a legal topic name and each
// partition index is >= 0, because a name like ".." or "" would otherwise reach a registry path
// or a directory name. A controller never sends one, so a request that does is malformed, and
// the connection is closed as for any malformed request.
import { topicNameError } from "../../controller/mod.ts";
import { CloseConnection } from "../services.ts";

export function checkControlNames(api: string, entries: Iterable<{ topic: string; partition?: number }>): void {
  for (const e of entries) {
    const bad = topicNameError(e.topic);
    if (bad !== null) throw new CloseConnection(`${api} names an illegal topic: ${bad}`);
    if (e.partition !== undefined && (!Number.isInteger(e.partition) || e.partition < 0)) {
      throw new CloseConnection(`${api} names partition ${e.partition} of ${e.topic}`);
    }
  }
}
