// The broker's two replication quotas (Kafka's QuotaFactory leader and follower
// ReplicationQuotaManagers), kept at the rates and windows of the broker config in force: set at
// start-up and again after every dynamic config change (leader/follower.replication.throttled.rate
// are dynamic broker configs, as in Kafka).
import type { Clock } from "../platform/mod.ts";
import { ReplicationQuotaManager } from "../replication/mod.ts";
import type { BrokerConfig } from "./config.ts";
import type { DynamicBrokerConfig } from "./dynamic_config.ts";

export interface ReplicationQuotas {
  leader: ReplicationQuotaManager;
  follower: ReplicationQuotaManager;
}

export function replicationQuotasOf(clock: Clock, dynamicConfig: DynamicBrokerConfig): ReplicationQuotas {
  const quotas = { leader: new ReplicationQuotaManager(clock), follower: new ReplicationQuotaManager(clock) };
  const apply = (config: BrokerConfig) => {
    const r = config.replication;
    for (const q of [quotas.leader, quotas.follower]) q.updateWindows(r.replicationQuotaWindowNum, r.replicationQuotaWindowSizeMs);
    quotas.leader.updateQuota(r.leaderReplicationThrottledRate);
    quotas.follower.updateQuota(r.followerReplicationThrottledRate);
  };
  apply(dynamicConfig.effective);
  dynamicConfig.listeners.push(apply);
  return quotas;
}
