// Every API strand speaks, as data: one schema per API key (request and response), sorted by key.
// The broker's handler registry pairs each with a handler; ApiVersions is answered from that, so a
// schema here without a handler is not advertised.
import type { ApiSchema } from "../schema.ts";
import { ProduceApi } from "./00_produce.ts";
import { FetchApi } from "./01_fetch.ts";
import { ListOffsetsApi } from "./02_list_offsets.ts";
import { MetadataApi } from "./03_metadata.ts";
import { LeaderAndIsrApi } from "./04_leader_and_isr.ts";
import { StopReplicaApi } from "./05_stop_replica.ts";
import { UpdateMetadataApi } from "./06_update_metadata.ts";
import { ControlledShutdownApi } from "./07_controlled_shutdown.ts";
import { OffsetCommitApi } from "./08_offset_commit.ts";
import { OffsetFetchApi } from "./09_offset_fetch.ts";
import { FindCoordinatorApi } from "./10_find_coordinator.ts";
import { JoinGroupApi } from "./11_join_group.ts";
import { HeartbeatApi } from "./12_heartbeat.ts";
import { LeaveGroupApi } from "./13_leave_group.ts";
import { SyncGroupApi } from "./14_sync_group.ts";
import { DescribeGroupsApi } from "./15_describe_groups.ts";
import { ListGroupsApi } from "./16_list_groups.ts";
import { SaslHandshakeApi } from "./17_sasl_handshake.ts";
import { ApiVersionsApi } from "./18_api_versions.ts";
import { CreateTopicsApi } from "./19_create_topics.ts";
import { DeleteTopicsApi } from "./20_delete_topics.ts";
import { DeleteRecordsApi } from "./21_delete_records.ts";
import { InitProducerIdApi } from "./22_init_producer_id.ts";
import { OffsetForLeaderEpochApi } from "./23_offset_for_leader_epoch.ts";
import { AddPartitionsToTxnApi } from "./24_add_partitions_to_txn.ts";
import { AddOffsetsToTxnApi } from "./25_add_offsets_to_txn.ts";
import { EndTxnApi } from "./26_end_txn.ts";
import { TxnOffsetCommitApi } from "./28_txn_offset_commit.ts";
import { WriteTxnMarkersApi } from "./27_write_txn_markers.ts";
import { DescribeAclsApi } from "./29_describe_acls.ts";
import { CreateAclsApi } from "./30_create_acls.ts";
import { DeleteAclsApi } from "./31_delete_acls.ts";
import { DescribeConfigsApi } from "./32_describe_configs.ts";
import { AlterConfigsApi } from "./33_alter_configs.ts";
import { DescribeLogDirsApi } from "./35_describe_log_dirs.ts";
import { SaslAuthenticateApi } from "./36_sasl_authenticate.ts";
import { CreatePartitionsApi } from "./37_create_partitions.ts";
import { DeleteGroupsApi } from "./42_delete_groups.ts";
import { ElectLeadersApi } from "./43_elect_leaders.ts";
import { IncrementalAlterConfigsApi } from "./44_incremental_alter_configs.ts";
import { AlterPartitionReassignmentsApi } from "./45_alter_partition_reassignments.ts";
import { ListPartitionReassignmentsApi } from "./46_list_partition_reassignments.ts";
import { OffsetDeleteApi } from "./47_offset_delete.ts";
import { DescribeClientQuotasApi } from "./48_describe_client_quotas.ts";
import { AlterClientQuotasApi } from "./49_alter_client_quotas.ts";
import { DescribeUserScramCredentialsApi } from "./50_describe_user_scram_credentials.ts";
import { AlterUserScramCredentialsApi } from "./51_alter_user_scram_credentials.ts";
import { AlterPartitionApi } from "./56_alter_partition.ts";
import { DescribeClusterApi } from "./60_describe_cluster.ts";
import { DescribeProducersApi } from "./61_describe_producers.ts";
import { DescribeTransactionsApi } from "./65_describe_transactions.ts";
import { ListTransactionsApi } from "./66_list_transactions.ts";

export { ApiVersionsApi, CreateTopicsApi, DeleteTopicsApi, FetchApi, ListOffsetsApi, MetadataApi, ProduceApi };
export { DescribeClusterApi };
export { AlterConfigsApi, DescribeConfigsApi, IncrementalAlterConfigsApi };
export { DeleteRecordsApi };
export { DescribeLogDirsApi };
// The idempotent producer: producer ids, and the producer state of each partition.
export { DescribeProducersApi, InitProducerIdApi };
// Client quotas (KIP-546).
export { AlterClientQuotasApi, DescribeClientQuotasApi };
// Authentication: SASL inside Kafka framing, and the SCRAM credentials the brokers check.
export { AlterUserScramCredentialsApi, DescribeUserScramCredentialsApi, SaslAuthenticateApi, SaslHandshakeApi };
// Authorization: the ACLs the authorizer checks.
export { CreateAclsApi, DeleteAclsApi, DescribeAclsApi };
// Replication: the controller's requests to brokers, a follower's truncation point, and the
// admin requests that move partitions.
export { ControlledShutdownApi, LeaderAndIsrApi, OffsetForLeaderEpochApi, StopReplicaApi, UpdateMetadataApi };
export {
  AlterPartitionApi,
  AlterPartitionReassignmentsApi,
  CreatePartitionsApi,
  ElectLeadersApi,
  ListPartitionReassignmentsApi,
};
export {
  DeleteGroupsApi,
  DescribeGroupsApi,
  FindCoordinatorApi,
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  ListGroupsApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  OffsetFetchApi,
  SyncGroupApi,
};

// Transactions.
export { AddOffsetsToTxnApi, AddPartitionsToTxnApi, DescribeTransactionsApi, EndTxnApi, ListTransactionsApi, TxnOffsetCommitApi, WriteTxnMarkersApi };

export const apiSchemas: readonly ApiSchema[] = [
  ProduceApi,
  FetchApi,
  ListOffsetsApi,
  MetadataApi,
  LeaderAndIsrApi,
  StopReplicaApi,
  UpdateMetadataApi,
  ControlledShutdownApi,
  OffsetCommitApi,
  OffsetFetchApi,
  FindCoordinatorApi,
  JoinGroupApi,
  HeartbeatApi,
  LeaveGroupApi,
  SyncGroupApi,
  DescribeGroupsApi,
  ListGroupsApi,
  ApiVersionsApi,
  CreateTopicsApi,
  DeleteTopicsApi,
  DeleteRecordsApi,
  InitProducerIdApi,
  OffsetForLeaderEpochApi,
  AddPartitionsToTxnApi,
  AddOffsetsToTxnApi,
  EndTxnApi,
  WriteTxnMarkersApi,
  TxnOffsetCommitApi,
  DescribeAclsApi,
  CreateAclsApi,
  DeleteAclsApi,
  DescribeConfigsApi,
  AlterConfigsApi,
  DescribeLogDirsApi,
  CreatePartitionsApi,
  DeleteGroupsApi,
  ElectLeadersApi,
  IncrementalAlterConfigsApi,
  AlterPartitionReassignmentsApi,
  ListPartitionReassignmentsApi,
  OffsetDeleteApi,
  SaslHandshakeApi,
  SaslAuthenticateApi,
  DescribeUserScramCredentialsApi,
  AlterUserScramCredentialsApi,
  DescribeClientQuotasApi,
  AlterClientQuotasApi,
  AlterPartitionApi,
  DescribeClusterApi,
  DescribeProducersApi,
  DescribeTransactionsApi,
  ListTransactionsApi,
].sort((a, b) => a.apiKey - b.apiKey);

const byKey = new Map<number, ApiSchema>(apiSchemas.map((a) => [a.apiKey, a]));

/** The schema for an API key, or undefined when strand does not implement that API. */
export function apiSchemaByKey(key: number): ApiSchema | undefined {
  return byKey.get(key);
}
