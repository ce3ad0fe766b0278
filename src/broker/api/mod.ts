// One handler per API key; the dispatcher registers exactly these, and ApiVersions reports them.
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";
import { produceHandler } from "./00_produce.ts";
import { fetchHandler } from "./01_fetch.ts";
import { listOffsetsHandler } from "./02_list_offsets.ts";
import { metadataHandler } from "./03_metadata.ts";
import { apiVersionsHandler } from "./18_api_versions.ts";
import { createTopicsHandler } from "./19_create_topics.ts";
import { deleteTopicsHandler } from "./20_delete_topics.ts";

export const apiHandlers: ApiHandler<BrokerServices>[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
];
