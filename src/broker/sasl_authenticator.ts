// SaslServerAuthenticator: the SASL phase of one connection on a SASL_PLAINTEXT or SASL_SSL
// listener, as Kafka's SaslServerAuthenticator runs it, before any other request is served.
//
// States and what each accepts (anything else closes the connection, as Kafka closes it):
//   initial            ApiVersions (once; the dispatcher answers it) or SaslHandshake
//   handshake          SaslHandshake (after ApiVersions)
//   authenticate       SaslHandshake v1+: SaslAuthenticate requests;
//                      SaslHandshake v0: raw tokens, each a 4-byte size and bytes with no Kafka header
//   complete           the dispatcher serves everything; a SaslHandshake starts re-authentication
//                      (KIP-368), which must keep the mechanism and the principal
//   failed             nothing: the connection closes
// A SaslHandshake naming a mechanism the listener does not enable is answered
// UNSUPPORTED_SASL_MECHANISM with the enabled list, then the connection closes. A failed exchange
// is answered SASL_AUTHENTICATION_FAILED with Kafka's message (never saying whether the user
// exists), after connection.failed.authentication.delay.ms, then the connection closes.
//
// Session lifetime: with connections.max.reauth.ms > 0 the SaslAuthenticate answer that completes
// the exchange carries it (v1+), and a request other than SaslHandshake arriving after it has run
// out closes the connection (the client should have re-authenticated).
import {
  API_VERSIONS_KEY,
  type ApiSchema,
  decode,
  encode,
  inRange,
  type MessageSchema,
  plainAuthenticate,
  readRequestHeaderPrefix,
  readRequestHeaderRest,
  type RequestHeader,
  responseHeaderFlexible,
  SaslAuthenticateApi,
  SaslHandshakeApi,
  type SaslServerStep,
  type ScramCredentialLookup,
  scramMechanismByName,
  ScramServerExchange,
  type Struct,
  writeResponseHeader,
} from "../protocol/mod.ts";
import { ErrorCode, Reader, Writer } from "../util/mod.ts";

/** What the listener's SASL settings give the authenticator. */
export interface SaslServerSettings {
  /** sasl.enabled.mechanisms for this listener, in the order the handshake answer lists them. */
  readonly mechanisms: readonly string[];
  /** PLAIN's users (PlainLoginModule's user_<name> options); undefined when PLAIN has none. */
  plainPassword(username: string): string | undefined;
  /** The SCRAM credential of a user for a mechanism (from /config/users/<user>). */
  readonly scramCredential: ScramCredentialLookup;
  /** connections.max.reauth.ms: 0 means a session never expires. */
  readonly reauthMs: number;
  /** sasl.server.max.receive.size: the largest token (and frame) read before authentication. */
  readonly maxReceiveBytes: number;
  /** A fresh server nonce (printable, no ','), from a secure random source. */
  nonce(): string;
  monotonicMs(): number;
}

/**
 * What to do with a frame:
 * - "dispatch": not the authenticator's; the dispatcher handles it (ApiVersions first, or any
 *   request once authenticated).
 * - "reply": send `frame` (size-prefixed) and go on reading.
 * - "authenticated": send `frame`; the connection now belongs to `principal`.
 * - "fail": send `frame` if any (after the failed-authentication delay when `delay`), then close;
 *   `reason` is for the broker's log, at warn at most.
 */
export type AuthAction =
  | { kind: "dispatch" }
  | { kind: "reply"; frame: Uint8Array }
  | { kind: "authenticated"; frame: Uint8Array; principal: string }
  | { kind: "fail"; frame: Uint8Array | null; reason: string; delay: boolean };

type State = "initial" | "handshake" | "authenticate" | "complete" | "failed";

interface Exchange {
  evaluate(token: Uint8Array): Promise<SaslServerStep> | SaslServerStep;
}

export class SaslServerAuthenticator {
  private state: State = "initial";
  /** Tokens travel in SaslAuthenticate requests (handshake v1+) rather than raw. */
  private framed = true;
  private mechanism = "";
  private exchange: Exchange | null = null;
  /** Set once authenticated: re-authentication must keep it. */
  private principalName: string | null = null;
  private sessionExpiresAtMs = Infinity;
  private reauthenticating = false;

  constructor(readonly settings: SaslServerSettings) {}

  get authenticated(): boolean {
    return this.state === "complete";
  }

  /** Authenticated, but the session lifetime has run out: the next frame must start a re-login. */
  get sessionExpired(): boolean {
    return this.state === "complete" && this.settings.monotonicMs() >= this.sessionExpiresAtMs;
  }

  get principal(): string | null {
    return this.principalName;
  }

  /** The mechanism of the last successful exchange (for logs and metrics). */
  get mechanismName(): string {
    return this.mechanism;
  }

  /** Handles one frame (without its size prefix). Never throws on client input. */
  async receive(frame: Uint8Array): Promise<AuthAction> {
    const action = await this.step(frame);
    if (action.kind === "fail") {
      this.state = "failed";
      this.exchange = null;
    }
    return action;
  }

  private async step(frame: Uint8Array): Promise<AuthAction> {
    if (this.state === "failed") return close("frame after a failed authentication");
    if (this.state === "authenticate" && !this.framed) return await this.token(frame, null);
    if (frame.length < 8) return close("frame too short for a request header");
    const r = new Reader(frame);
    const header = readRequestHeaderPrefix(r);
    const key = header.apiKey;
    if (this.state === "complete") {
      if (key === SaslHandshakeApi.apiKey) return this.handshake(header, r, true);
      if (this.settings.monotonicMs() >= this.sessionExpiresAtMs) {
        return close("session expired: the client did not re-authenticate within connections.max.reauth.ms");
      }
      return { kind: "dispatch" };
    }
    if (this.state === "authenticate") {
      if (key !== SaslAuthenticateApi.apiKey) return close(`unexpected request (API key ${key}) during SASL authentication`);
      const request = body(SaslAuthenticateApi, header, r);
      if (request === null) return close("malformed SaslAuthenticate request");
      return await this.token(request.authBytes as Uint8Array, header);
    }
    // initial or handshake
    if (key === API_VERSIONS_KEY && this.state === "initial") {
      this.state = "handshake";
      return { kind: "dispatch" };
    }
    if (key !== SaslHandshakeApi.apiKey) {
      return close(
        this.state === "initial"
          ? "invalid request, potential reasons: kafka client configured with the wrong security protocol, it does not support KIP-43 or it is not a kafka client"
          : `unexpected request (API key ${key}) during SASL handshake`,
      );
    }
    return this.handshake(header, r, false);
  }

  private handshake(header: RequestHeader, r: Reader, reauth: boolean): AuthAction {
    const request = body(SaslHandshakeApi, header, r);
    if (request === null) return close("malformed SaslHandshake request");
    const mechanism = request.mechanism as string;
    const mechanisms = [...this.settings.mechanisms];
    if (reauth && (header.apiVersion < 1 || !this.framed)) {
      return close("re-authentication needs SaslHandshake v1 and SaslAuthenticate");
    }
    if (!mechanisms.includes(mechanism) || (reauth && mechanism !== this.mechanism)) {
      const reason = reauth
        ? `SASL mechanism '${mechanism}' requested by client is not supported for re-authentication of mechanism '${this.mechanism}'`
        : `unsupported SASL mechanism ${mechanism}`;
      const answer = response(SaslHandshakeApi, header, { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms });
      return { kind: "fail", frame: answer, reason, delay: false };
    }
    const exchange = this.newExchange(mechanism);
    if (exchange === null) return close(`mechanism ${mechanism} is enabled but has no server`);
    this.exchange = exchange;
    this.mechanism = mechanism;
    this.framed = header.apiVersion >= 1;
    this.reauthenticating = reauth;
    this.state = "authenticate";
    return { kind: "reply", frame: response(SaslHandshakeApi, header, { errorCode: 0, mechanisms }) };
  }

  private newExchange(mechanism: string): Exchange | null {
    if (mechanism === "PLAIN") return { evaluate: (t) => plainAuthenticate(t, (u) => this.settings.plainPassword(u)) };
    const scram = scramMechanismByName(mechanism);
    if (scram !== undefined) return new ScramServerExchange(scram, this.settings.scramCredential, this.settings.nonce());
    return null;
  }

  /** One SASL token: from a SaslAuthenticate request (header set) or raw (header null). */
  private async token(token: Uint8Array, header: RequestHeader | null): Promise<AuthAction> {
    const max = this.settings.maxReceiveBytes;
    if (token.length > max) return close(`SASL token of ${token.length} bytes, above sasl.server.max.receive.size ${max}`);
    const step = await this.exchange!.evaluate(token);
    if (step.kind === "failed") {
      const message = this.reauthenticating ? step.clientMessage.replace("during authentication", "during re-authentication") : step.clientMessage;
      const frame = header === null
        ? null
        : response(SaslAuthenticateApi, header, { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message, authBytes: new Uint8Array(0), sessionLifetimeMs: 0n });
      return { kind: "fail", frame, reason: `${this.mechanism}: ${step.reason}`, delay: true };
    }
    if (step.kind === "challenge") return { kind: "reply", frame: this.tokenFrame(step.token, header, 0) };
    const principal = `User:${step.username}`;
    if (this.reauthenticating && principal !== this.principalName) {
      const message = `Cannot change principals during re-authentication from ${this.principalName}: ${principal}`;
      const frame = header === null
        ? null
        : response(SaslAuthenticateApi, header, { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message, authBytes: new Uint8Array(0), sessionLifetimeMs: 0n });
      return { kind: "fail", frame, reason: message, delay: true };
    }
    const lifetimeMs = this.settings.reauthMs > 0 ? this.settings.reauthMs : 0;
    this.sessionExpiresAtMs = lifetimeMs > 0 ? this.settings.monotonicMs() + lifetimeMs : Infinity;
    this.principalName = principal;
    this.state = "complete";
    this.exchange = null;
    return { kind: "authenticated", frame: this.tokenFrame(step.token, header, lifetimeMs), principal };
  }

  private tokenFrame(token: Uint8Array, header: RequestHeader | null, lifetimeMs: number): Uint8Array {
    if (header !== null) {
      return response(SaslAuthenticateApi, header, { errorCode: 0, errorMessage: null, authBytes: token, sessionLifetimeMs: BigInt(lifetimeMs) });
    }
    const w = new Writer(4 + token.length);
    w.int32(token.length).bytes(token);
    return w.finish();
  }
}

function close(reason: string): AuthAction {
  return { kind: "fail", frame: null, reason, delay: false };
}

/** The request's body, or null when the version is not supported or the bytes do not decode. */
function body(api: ApiSchema, header: RequestHeader, r: Reader): Struct | null {
  const request: MessageSchema = api.request;
  if (!inRange(request.versions, header.apiVersion)) return null;
  readRequestHeaderRest(r, header, header.apiVersion >= request.flexibleFrom);
  const decoded = r.ok ? decode(request, header.apiVersion, r) : null;
  return r.ok ? decoded : null;
}

function response(api: ApiSchema, header: RequestHeader, answer: Struct): Uint8Array {
  const flexible = header.apiVersion >= api.request.flexibleFrom;
  const w = new Writer(256);
  w.int32(0);
  writeResponseHeader(w, header.correlationId, responseHeaderFlexible(header.apiKey, flexible));
  encode(api.response, header.apiVersion, answer, w);
  w.view.setInt32(0, w.pos - 4);
  return w.finish();
}
