// Every API strand speaks, as data: one schema per API key (request and response), sorted by key.
// The broker's handler registry pairs each with a handler; ApiVersions is answered from that.
import type { ApiSchema } from "../schema.ts";
import { ProduceApi } from "./00_produce.ts";
import { FetchApi } from "./01_fetch.ts";
import { ListOffsetsApi } from "./02_list_offsets.ts";
import { MetadataApi } from "./03_metadata.ts";
import { ApiVersionsApi } from "./18_api_versions.ts";
import { CreateTopicsApi } from "./19_create_topics.ts";
import { DeleteTopicsApi } from "./20_delete_topics.ts";

export { ApiVersionsApi, CreateTopicsApi, DeleteTopicsApi, FetchApi, ListOffsetsApi, MetadataApi, ProduceApi };

export const apiSchemas: readonly ApiSchema[] = [
  ProduceApi,
  FetchApi,
  ListOffsetsApi,
  MetadataApi,
  ApiVersionsApi,
  CreateTopicsApi,
  DeleteTopicsApi,
].sort((a, b) => a.apiKey - b.apiKey);

const byKey = new Map<number, ApiSchema>(apiSchemas.map((a) => [a.apiKey, a]));

/** The schema for an API key, or undefined when strand does not implement that API. */
export function apiSchemaByKey(key: number): ApiSchema | undefined {
  return byKey.get(key);
}
