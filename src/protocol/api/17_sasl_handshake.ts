// SaslHandshake (key 17), v0-1: the client names its SASL mechanism; the answer lists the enabled
// ones. v0 is followed by raw SASL tokens (each a 4-byte length and bytes, outside Kafka framing);
// v1 by SaslAuthenticate requests (KIP-152). Never flexible.
import { api, message } from "../schema.ts";

export const SaslHandshakeApi = api(
  message(17, "SaslHandshakeRequest", "0-1", null, `
    mechanism             string
  `),
  message(17, "SaslHandshakeResponse", "0-1", null, `
    errorCode             int16
    mechanisms            []string
  `),
);
