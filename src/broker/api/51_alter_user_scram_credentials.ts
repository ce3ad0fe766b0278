// AlterUserScramCredentials (51), v0: deletes and upserts SCRAM credentials under /config/users,
// with a change notification so every broker reloads the user (scram_credentials.ts). Needs ALTER
// on the cluster: else CLUSTER_AUTHORIZATION_FAILED for each user named, as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { AlterUserScramCredentialsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import { alterUserScramCredentials } from "../scram_credentials.ts";
import type { BrokerServices } from "../services.ts";

export const alterUserScramCredentialsHandler: ApiHandler<BrokerServices> = {
  api: AlterUserScramCredentialsApi,
  async handle(s, ctx, req) {
    const deletions = req.deletions as { name: string; mechanism: number }[];
    const upsertions = req.upsertions as { name: string; mechanism: number; iterations: number; salt: Uint8Array; saltedPassword: Uint8Array }[];
    if (!clusterAllowed(s, ctx, AclOperation.ALTER)) {
      const users = new Set([...deletions, ...upsertions].map((u) => u.name));
      const e = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: "Cluster authorization failed." };
      return { throttleTimeMs: 0, results: [...users].map((user) => ({ user, ...e })) };
    }
    return { throttleTimeMs: 0, results: await alterUserScramCredentials(s.registry, deletions, upsertions) };
  },
};
