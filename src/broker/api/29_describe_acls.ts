// DescribeAcls (29), v0-3 (v0 literal only, v2+ flexible): acl_apis.ts answers as Kafka's AclApis does,
// CLUSTER DESCRIBE needed, SECURITY_DISABLED without an authorizer.
import { DescribeAclsApi } from "../../protocol/mod.ts";
import { describeAcls } from "../acl_apis.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const describeAclsHandler: ApiHandler<BrokerServices> = {
  api: DescribeAclsApi,
  handle: describeAcls,
};
