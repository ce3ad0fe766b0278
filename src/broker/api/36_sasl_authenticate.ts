// SaslAuthenticate (36), v0-2, as the dispatcher sees it: outside a SASL exchange (a PLAINTEXT or
// SSL listener, or after the exchange completed). Kafka answers ILLEGAL_SASL_STATE there.
import { SaslAuthenticateApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const saslAuthenticateHandler: ApiHandler<BrokerServices> = {
  api: SaslAuthenticateApi,
  handle() {
    return {
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      errorMessage: "SaslAuthenticate request received outside a SASL exchange",
      authBytes: new Uint8Array(0),
      sessionLifetimeMs: 0n,
    };
  },
};
