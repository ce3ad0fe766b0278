// One handler per API key; the dispatcher registers exactly these, and ApiVersions reports them.
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";
import { produceHandler } from "./00_produce.ts";
import { fetchHandler } from "./01_fetch.ts";
import { listOffsetsHandler } from "./02_list_offsets.ts";
import { metadataHandler } from "./03_metadata.ts";
import { leaderAndIsrHandler } from "./04_leader_and_isr.ts";
import { stopReplicaHandler } from "./05_stop_replica.ts";
import { updateMetadataHandler } from "./06_update_metadata.ts";
import { controlledShutdownHandler } from "./07_controlled_shutdown.ts";
import { offsetCommitHandler } from "./08_offset_commit.ts";
import { offsetFetchHandler } from "./09_offset_fetch.ts";
import { findCoordinatorHandler } from "./10_find_coordinator.ts";
import { joinGroupHandler } from "./11_join_group.ts";
import { heartbeatHandler } from "./12_heartbeat.ts";
import { leaveGroupHandler } from "./13_leave_group.ts";
import { syncGroupHandler } from "./14_sync_group.ts";
import { describeGroupsHandler } from "./15_describe_groups.ts";
import { listGroupsHandler } from "./16_list_groups.ts";
import { saslHandshakeHandler } from "./17_sasl_handshake.ts";
import { apiVersionsHandler } from "./18_api_versions.ts";
import { createTopicsHandler } from "./19_create_topics.ts";
import { deleteTopicsHandler } from "./20_delete_topics.ts";
import { deleteRecordsHandler } from "./21_delete_records.ts";
import { initProducerIdHandler } from "./22_init_producer_id.ts";
import { describeProducersHandler } from "./61_describe_producers.ts";
import { addPartitionsToTxnHandler } from "./24_add_partitions_to_txn.ts";
import { addOffsetsToTxnHandler } from "./25_add_offsets_to_txn.ts";
import { endTxnHandler } from "./26_end_txn.ts";
import { txnOffsetCommitHandler } from "./28_txn_offset_commit.ts";
import { describeTransactionsHandler } from "./65_describe_transactions.ts";
import { listTransactionsHandler } from "./66_list_transactions.ts";
import { offsetForLeaderEpochHandler } from "./23_offset_for_leader_epoch.ts";
import { writeTxnMarkersHandler } from "./27_write_txn_markers.ts";
import { describeAclsHandler } from "./29_describe_acls.ts";
import { createAclsHandler } from "./30_create_acls.ts";
import { deleteAclsHandler } from "./31_delete_acls.ts";
import { deleteGroupsHandler } from "./42_delete_groups.ts";
import { offsetDeleteHandler } from "./47_offset_delete.ts";
import { describeConfigsHandler } from "./32_describe_configs.ts";
import { alterConfigsHandler } from "./33_alter_configs.ts";
import { describeLogDirsHandler } from "./35_describe_log_dirs.ts";
import { saslAuthenticateHandler } from "./36_sasl_authenticate.ts";
import { describeClientQuotasHandler } from "./48_describe_client_quotas.ts";
import { alterClientQuotasHandler } from "./49_alter_client_quotas.ts";
import { describeUserScramCredentialsHandler } from "./50_describe_user_scram_credentials.ts";
import { alterUserScramCredentialsHandler } from "./51_alter_user_scram_credentials.ts";
import { createPartitionsHandler } from "./37_create_partitions.ts";
import { electLeadersHandler } from "./43_elect_leaders.ts";
import { alterPartitionReassignmentsHandler } from "./45_alter_partition_reassignments.ts";
import { alterPartitionHandler } from "./56_alter_partition.ts";
import { listPartitionReassignmentsHandler } from "./46_list_partition_reassignments.ts";
import { incrementalAlterConfigsHandler } from "./44_incremental_alter_configs.ts";
import { describeClusterHandler } from "./60_describe_cluster.ts";

export const apiHandlers: ApiHandler<BrokerServices>[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  leaderAndIsrHandler,
  stopReplicaHandler,
  updateMetadataHandler,
  controlledShutdownHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  findCoordinatorHandler,
  joinGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  syncGroupHandler,
  describeGroupsHandler,
  listGroupsHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  initProducerIdHandler,
  describeProducersHandler,
  addPartitionsToTxnHandler,
  addOffsetsToTxnHandler,
  endTxnHandler,
  txnOffsetCommitHandler,
  describeTransactionsHandler,
  listTransactionsHandler,
  offsetForLeaderEpochHandler,
  writeTxnMarkersHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  describeLogDirsHandler,
  createPartitionsHandler,
  electLeadersHandler,
  alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler,
  alterPartitionHandler,
  deleteGroupsHandler,
  incrementalAlterConfigsHandler,
  offsetDeleteHandler,
  saslHandshakeHandler,
  saslAuthenticateHandler,
  describeUserScramCredentialsHandler,
  alterUserScramCredentialsHandler,
  describeAclsHandler,
  createAclsHandler,
  deleteAclsHandler,
  describeClientQuotasHandler,
  alterClientQuotasHandler,
  describeClusterHandler,
];
