// What the broker does when a log dir fails (Kafka's ReplicaManager.handleLogDirFailure, broker
// side): the dir's partitions go offline in the ReplicaManager, the controller is told through a
// persistent-sequential /log_dir_event_notification/log_dir_event_<seq> znode (Kafka's payload:
// {"version":1,"broker":<id>,"event":1}), and when no dir is left the broker stops, as Kafka
// halts. Dirs already offline at start-up are reported the same way, once the broker is up.

import { registryWriteFailure } from "../controller/mod.ts";
import type { LogManager } from "../log/mod.ts";
import { LogDirEventNotificationSequenceZNode, type Registry } from "../registry/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import type { Logger } from "../util/mod.ts";

export function watchLogDirFailures(
  logManager: LogManager,
  replicaManager: ReplicaManager,
  registry: Registry,
  brokerId: number,
  logger: Logger,
  onEveryDirFailed: (lastDir: string) => void,
): void {
  const notifyController = () => {
    const path = LogDirEventNotificationSequenceZNode.path();
    registry.create(path, LogDirEventNotificationSequenceZNode.encode(brokerId), "persistent-sequential").then(
      (created) => logger.info({ znode: created }, "told the controller of a log dir failure"),
      // The controller only logs these; the broker itself reports its offline replicas. A full
      // registry disk is said at warn, as every refused registry write is.
      (e) => logger[registryWriteFailure(e, "")?.transient ? "warn" : "error"]({ znode: path, err: (e as Error).message }, "cannot tell the controller of a log dir failure"),
    );
  };
  logManager.dirFailureListeners.push((dir, partitions) => {
    replicaManager.handleLogDirFailure(dir, partitions);
    notifyController();
    if (logManager.onlineDirs.length === 0) onEveryDirFailed(dir);
  });
  if (logManager.offlineLogDirs.length > 0) notifyController();
}
