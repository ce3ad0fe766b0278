// SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer answers it: one token
// `[authzid] NUL authcid NUL passwd`, UTF-8, checked against the users of the listener's JAAS
// config (`user_<name>="<password>"` options of PlainLoginModule). The token travels in the clear
// inside the Kafka frame, which is why Kafka (and strand) only advise PLAIN over SASL_SSL.
import { constantTimeEqual } from "../../util/mod.ts";
import type { SaslServerStep } from "./scram.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The expected password of a user, or undefined when there is no such user. */
export type PlainPasswordLookup = (username: string) => string | undefined;

/** Checks one PLAIN token. Messages to the client are Kafka's own. */
export function plainAuthenticate(token: Uint8Array, lookup: PlainPasswordLookup): SaslServerStep {
  let message: string;
  try {
    message = decoder.decode(token);
  } catch {
    return failed("SASL/PLAIN token is not UTF-8", "Invalid SASL/PLAIN response: not UTF-8");
  }
  const tokens = message.split("\u0000");
  if (tokens.length !== 3) {
    const why = `Invalid SASL/PLAIN response: expected 3 tokens, got ${tokens.length}`;
    return failed(why, why);
  }
  const [authzid, username, password] = tokens;
  if (username === "") return failed("PLAIN username empty", "Authentication failed: username not specified");
  if (password === "") return failed("PLAIN password empty", "Authentication failed: password not specified");
  const expected = lookup(username);
  // Compare even for an unknown user, so the answer's timing does not say which users exist.
  const same = constantTimeEqual(encoder.encode(password), encoder.encode(expected ?? password + "\u0000"));
  if (expected === undefined || !same) {
    return failed(`wrong username or password for user ${username}`, "Authentication failed: Invalid username or password");
  }
  if (authzid !== "" && authzid !== username) {
    return failed(
      "PLAIN authorization id differs from username",
      "Authentication failed: Client requested an authorization id that is different from username",
    );
  }
  return { kind: "complete", token: new Uint8Array(0), username };
}

/** The client's PLAIN token. */
export function plainToken(username: string, password: string): Uint8Array {
  return encoder.encode(`\u0000${username}\u0000${password}`);
}

function failed(reason: string, clientMessage: string): SaslServerStep {
  return { kind: "failed", reason, clientMessage };
}
