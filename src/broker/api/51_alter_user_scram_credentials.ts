// AlterUserScramCredentials (51), v0: deletes and upserts SCRAM credentials under /config/users,
// with a change notification so every broker reloads the user (scram_credentials.ts).
import { AlterUserScramCredentialsApi } from "../../protocol/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import { alterUserScramCredentials } from "../scram_credentials.ts";
import type { BrokerServices } from "../services.ts";

export const alterUserScramCredentialsHandler: ApiHandler<BrokerServices> = {
  api: AlterUserScramCredentialsApi,
  async handle(s, _ctx, req) {
    const deletions = req.deletions as { name: string; mechanism: number }[];
    const upsertions = req.upsertions as { name: string; mechanism: number; iterations: number; salt: Uint8Array; saltedPassword: Uint8Array }[];
    return { throttleTimeMs: 0, results: await alterUserScramCredentials(s.registry, deletions, upsertions) };
  },
};
