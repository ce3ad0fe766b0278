// DescribeUserScramCredentials (50), v0: each user's SCRAM mechanisms and iteration counts, read
// from /config/users (scram_credentials.ts), never the keys.
import { DescribeUserScramCredentialsApi } from "../../protocol/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import { describeUserScramCredentials } from "../scram_credentials.ts";
import type { BrokerServices } from "../services.ts";

export const describeUserScramCredentialsHandler: ApiHandler<BrokerServices> = {
  api: DescribeUserScramCredentialsApi,
  handle(s, _ctx, req) {
    const users = req.users as { name: string }[] | null;
    return describeUserScramCredentials(s.registry, users === null ? null : users.map((u) => u.name));
  },
};
