// Coordinator: the group coordinator of one broker, the facade the request handlers call.
// It joins the membership protocol (GroupCoordinator), the group store (GroupMetadataManager)
// and the offset operations (OffsetsOps), follows the broker's leadership of __consumer_offsets
// partitions (load on becoming leader, unload on losing it), and expires old offsets on
// offsets.retention.check.interval.ms.

import type { Clock, Timer } from "../platform/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type GroupCoordinatorConfig, OFFSETS_TOPIC } from "./config.ts";
import type { GroupState } from "./group.ts";
import { GroupCoordinator } from "./group_coordinator.ts";
import { GroupMetadataManager, type OffsetsTopicLog } from "./group_metadata_manager.ts";
import { OffsetsOps } from "./offsets.ts";
import { TxnOffsetsOps } from "./txn_offsets.ts";

export interface GroupOverview {
  groupId: string;
  protocolType: string;
  state: GroupState;
}

export interface GroupDescription {
  groupId: string;
  state: GroupState;
  protocolType: string;
  protocolName: string;
  members: {
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    metadata: Uint8Array;
    assignment: Uint8Array;
  }[];
}

export class Coordinator {
  readonly manager: GroupMetadataManager;
  readonly groups: GroupCoordinator;
  readonly offsets: OffsetsOps;
  /** TxnOffsetCommit: offsets held until their transaction's marker (txn_offsets.ts). */
  readonly txnOffsets: TxnOffsetsOps;
  private expiryTimer: Timer | null = null;

  constructor(
    log: OffsetsTopicLog,
    readonly config: GroupCoordinatorConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
    randomHex: () => string,
  ) {
    this.manager = new GroupMetadataManager(log, config, clock, logger, randomHex);
    this.groups = new GroupCoordinator(this.manager, config, clock, logger);
    this.offsets = new OffsetsOps(this.manager, config, () => clock.nowMs());
    this.txnOffsets = new TxnOffsetsOps(this.manager, config, () => clock.nowMs());
  }

  startup(): void {
    this.expiryTimer = this.clock.setInterval(() => {
      this.manager.expireOffsets().catch((e) => this.logger.error({ err: String(e) }, "offset expiry failed"));
    }, this.config.offsetsRetentionCheckIntervalMs);
  }

  shutdown(): void {
    this.expiryTimer?.cancel();
    for (let p = 0; p < this.config.offsetsTopicNumPartitions; p++) this.onResignation(p);
  }

  /** This broker became leader of __consumer_offsets-partition. */
  onElection(partition: number): Promise<void> {
    return this.manager.loadPartition(partition, (g) => {
      // Loaded members get a session timeout to come back in, as Kafka schedules on load.
      for (const m of g.members.values()) this.groups.heartbeat(g.groupId, m.memberId, m.groupInstanceId, g.generationId);
    });
  }

  /**
   * A transaction marker was written to __consumer_offsets-partition (WriteTxnMarkers, as the
   * leader): the producer's transactional offsets there become visible or are dropped.
   */
  onTxnMarker(partition: number, producerId: bigint, committed: boolean): void {
    this.manager.completeTransaction(partition, producerId, committed);
  }

  /** This broker stopped leading __consumer_offsets-partition. */
  onResignation(partition: number): void {
    this.manager.unloadPartition(partition, (g) => this.groups.unloadGroup(g));
  }

  /**
   * The controller deleted these topics (UpdateMetadata's deleted topics, as Kafka's
   * handleUpdateMetadataRequest calls onPartitionsDeleted): their committed offsets get tombstones.
   */
  onTopicsDeleted(topics: string[]): void {
    const doomed = new Set(topics.filter((t) => t !== OFFSETS_TOPIC));
    if (doomed.size === 0) return;
    this.manager.removeOffsetsOfTopics(doomed).then(
      (n) => this.logger.info({ topics: [...doomed], offsets: n }, "removed committed offsets of deleted topics"),
      (e) => this.logger.error({ topics: [...doomed], err: String(e) }, "removing offsets of deleted topics failed"),
    );
  }

  listGroups(statesFilter: string[]): GroupOverview[] {
    const out: GroupOverview[] = [];
    for (const g of this.manager.groups.values()) {
      if (!this.manager.isOwned(g.partition) || g.is("Dead")) continue;
      if (statesFilter.length > 0 && !statesFilter.some((s) => s.toLowerCase() === g.state.toLowerCase())) continue;
      out.push({ groupId: g.groupId, protocolType: g.protocolType ?? "", state: g.state });
    }
    return out.sort((a, b) => a.groupId.localeCompare(b.groupId));
  }

  /** DescribeGroups for one group; an unknown group is described as Dead, as Kafka does. */
  describeGroup(groupId: string): { errorCode: number; group: GroupDescription } {
    const errorCode = this.manager.coordinatorError(groupId);
    const g = errorCode === 0 ? this.manager.getGroup(groupId) : undefined;
    if (g === undefined) {
      return { errorCode, group: { groupId, state: "Dead", protocolType: "", protocolName: "", members: [] } };
    }
    // Member metadata is shown only once a protocol is chosen (Stable), as Kafka does.
    const showMetadata = g.is("Stable") && g.protocolName !== null;
    return {
      errorCode,
      group: {
        groupId,
        state: g.state,
        protocolType: g.protocolType ?? "",
        protocolName: g.is("Stable") ? g.protocolName ?? "" : "",
        members: [...g.members.values()].map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          metadata: showMetadata ? m.metadataFor(g.protocolName!) : new Uint8Array(0),
          assignment: g.is("Stable") ? m.assignment : new Uint8Array(0),
        })),
      },
    };
  }
}
