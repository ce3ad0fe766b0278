// Every API strand speaks, as data: one schema per API key (request and response), sorted by key.
// The broker's handler registry pairs each with a handler; ApiVersions is answered from that.
import type { ApiSchema } from "../schema.ts";
import { ProduceApi } from "./00_produce.ts";
import { FetchApi } from "./01_fetch.ts";
import { ListOffsetsApi } from "./02_list_offsets.ts";
import { MetadataApi } from "./03_metadata.ts";
import { OffsetCommitApi } from "./08_offset_commit.ts";
import { OffsetFetchApi } from "./09_offset_fetch.ts";
import { FindCoordinatorApi } from "./10_find_coordinator.ts";
import { JoinGroupApi } from "./11_join_group.ts";
import { HeartbeatApi } from "./12_heartbeat.ts";
import { LeaveGroupApi } from "./13_leave_group.ts";
import { SyncGroupApi } from "./14_sync_group.ts";
import { DescribeGroupsApi } from "./15_describe_groups.ts";
import { ListGroupsApi } from "./16_list_groups.ts";
import { ApiVersionsApi } from "./18_api_versions.ts";
import { CreateTopicsApi } from "./19_create_topics.ts";
import { DeleteTopicsApi } from "./20_delete_topics.ts";
import { DeleteRecordsApi } from "./21_delete_records.ts";
import { DescribeConfigsApi } from "./32_describe_configs.ts";
import { AlterConfigsApi } from "./33_alter_configs.ts";
import { DescribeLogDirsApi } from "./35_describe_log_dirs.ts";
import { DeleteGroupsApi } from "./42_delete_groups.ts";
import { IncrementalAlterConfigsApi } from "./44_incremental_alter_configs.ts";
import { OffsetDeleteApi } from "./47_offset_delete.ts";

export { ApiVersionsApi, CreateTopicsApi, DeleteTopicsApi, FetchApi, ListOffsetsApi, MetadataApi, ProduceApi };
export { AlterConfigsApi, DescribeConfigsApi, IncrementalAlterConfigsApi };
export { DeleteRecordsApi };
export { DescribeLogDirsApi };
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

export const apiSchemas: readonly ApiSchema[] = [
  ProduceApi,
  FetchApi,
  ListOffsetsApi,
  MetadataApi,
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
  DescribeConfigsApi,
  AlterConfigsApi,
  DescribeLogDirsApi,
  DeleteGroupsApi,
  IncrementalAlterConfigsApi,
  OffsetDeleteApi,
].sort((a, b) => a.apiKey - b.apiKey);

const byKey = new Map<number, ApiSchema>(apiSchemas.map((a) => [a.apiKey, a]));

/** The schema for an API key, or undefined when strand does not implement that API. */
export function apiSchemaByKey(key: number): ApiSchema | undefined {
  return byKey.get(key);
}
