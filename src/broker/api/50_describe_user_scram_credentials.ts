// DescribeUserScramCredentials (50), v0: each user's SCRAM mechanisms and iteration counts, read
// from /config/users (scram_credentials.ts), never the keys. Needs DESCRIBE on the cluster: else
// CLUSTER_AUTHORIZATION_FAILED at the top and for each user named, as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DescribeUserScramCredentialsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import { describeUserScramCredentials } from "../scram_credentials.ts";
import type { BrokerServices } from "../services.ts";

export const describeUserScramCredentialsHandler: ApiHandler<BrokerServices> = {
  api: DescribeUserScramCredentialsApi,
  handle(s, ctx, req) {
    const users = req.users as { name: string }[] | null;
    if (!clusterAllowed(s, ctx, AclOperation.DESCRIBE)) {
      const e = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: "Cluster authorization failed." };
      return { throttleTimeMs: 0, ...e, results: (users ?? []).map(() => ({ user: "", ...e, credentialInfos: [] })) };
    }
    return describeUserScramCredentials(s.registry, users === null ? null : users.map((u) => u.name));
  },
};
