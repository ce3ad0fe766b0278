// SaslAuthenticate (key 36), v0-2: one SASL token each way, inside Kafka framing (KIP-152). v1 adds
// the session lifetime the server grants (KIP-368: re-authenticate before it ends); v2 is flexible.
import { api, message } from "../schema.ts";

export const SaslAuthenticateApi = api(
  message(36, "SaslAuthenticateRequest", "0-2", "2+", `
    authBytes             bytes
  `),
  message(36, "SaslAuthenticateResponse", "0-2", "2+", `
    errorCode             int16
    errorMessage          string  nullable
    authBytes             bytes
    sessionLifetimeMs     int64   v1+  default=0
  `),
);
