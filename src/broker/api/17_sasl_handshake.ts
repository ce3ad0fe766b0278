// SaslHandshake (17), v0-1, as the dispatcher sees it: only on a connection that is not in its
// SASL phase (a PLAINTEXT or SSL listener; on a SASL listener the SaslServerAuthenticator takes
// every SaslHandshake, re-authentication included). Kafka answers ILLEGAL_SASL_STATE there.
import { SaslHandshakeApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const saslHandshakeHandler: ApiHandler<BrokerServices> = {
  api: SaslHandshakeApi,
  handle() {
    return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
  },
};
