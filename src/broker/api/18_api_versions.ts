// ApiVersions (18), v0-3. The list comes from the dispatcher's handler registry. An unknown
// version is answered by the dispatcher itself (UNSUPPORTED_VERSION in the v0 layout).
import { ApiVersionsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const apiVersionsHandler: ApiHandler<BrokerServices> = {
  api: ApiVersionsApi,
  handle(_s, ctx) {
    return {
      errorCode: ErrorCode.NONE,
      apiKeys: ctx.supportedApis(),
      throttleTimeMs: 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: -1n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    };
  },
};
