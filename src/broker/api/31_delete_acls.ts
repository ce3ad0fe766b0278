// DeleteAcls (31), v0-3 (v0 literal only, v2+ flexible): acl_apis.ts answers as Kafka's AclApis does,
// CLUSTER ALTER needed, SECURITY_DISABLED without an authorizer.
import { DeleteAclsApi } from "../../protocol/mod.ts";
import { deleteAcls } from "../acl_apis.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const deleteAclsHandler: ApiHandler<BrokerServices> = {
  api: DeleteAclsApi,
  handle: deleteAcls,
};
