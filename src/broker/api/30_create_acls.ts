// CreateAcls (30), v0-3 (v0 literal only, v2+ flexible): acl_apis.ts answers as Kafka's AclApis does,
// CLUSTER ALTER needed, SECURITY_DISABLED without an authorizer.
import { CreateAclsApi } from "../../protocol/mod.ts";
import { createAcls } from "../acl_apis.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const createAclsHandler: ApiHandler<BrokerServices> = {
  api: CreateAclsApi,
  handle: createAcls,
};
