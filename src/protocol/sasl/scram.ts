// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks them: both ends of the
// exchange and the stored credential.
//
// Messages (Kafka's ScramMessages; only gs2 header "n" — no channel binding — is accepted, and the
// reserved m= attribute fails the exchange as RFC 5802 says it must):
//   client-first  n,[a=<authzid>],n=<saslname>,r=<client nonce>[,<ext>=<value>...]
//   server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
//   client-final  c=<base64 gs2 header>,r=<nonce>[,<ext>...],p=<base64 proof>
//   server-final  v=<base64 server signature>   (or e=<error>)
// The AuthMessage both sides sign is client-first-bare "," server-first "," client-final-without-proof,
// where client-final-without-proof is "c=...,r=..." (Kafka drops extensions there too).
//
// The stored credential is Kafka's string `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`
// (ScramCredentialUtils), under /config/users/<user> keyed by mechanism name. The server never sees
// or keeps a password: it checks H(ClientProof XOR ClientSignature) against stored_key.
//
// Crypto is WebCrypto (crypto.subtle, a web global in both runtimes): asynchronous, which is why the
// exchanges are async. Hi() is PBKDF2 with one output block (dkLen = hash length).
import { base64Decode, base64Encode, constantTimeEqual, scramIterationsMax, scramIterationsMin } from "../../util/mod.ts";

export type ScramMechanismName = "SCRAM-SHA-256" | "SCRAM-SHA-512";

export interface ScramMechanism {
  readonly name: ScramMechanismName;
  /** Kafka's ScramMechanism type as DescribeUserScramCredentials and AlterUserScramCredentials carry it. */
  readonly type: 1 | 2;
  readonly hash: "SHA-256" | "SHA-512";
  readonly keyBytes: number;
}

export const scramSha256: ScramMechanism = { name: "SCRAM-SHA-256", type: 1, hash: "SHA-256", keyBytes: 32 };
export const scramSha512: ScramMechanism = { name: "SCRAM-SHA-512", type: 2, hash: "SHA-512", keyBytes: 64 };

export function scramMechanismByName(name: string): ScramMechanism | undefined {
  return name === scramSha256.name ? scramSha256 : name === scramSha512.name ? scramSha512 : undefined;
}

export function scramMechanismByType(type: number): ScramMechanism | undefined {
  return type === 1 ? scramSha256 : type === 2 ? scramSha512 : undefined;
}

export interface ScramCredential {
  readonly salt: Uint8Array;
  readonly storedKey: Uint8Array;
  readonly serverKey: Uint8Array;
  readonly iterations: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

// WebCrypto's types want ArrayBuffer-backed views; ours may sit on a SharedArrayBuffer-typed buffer.
function own(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}

async function hmac(mech: ScramMechanism, key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", own(key), { name: "HMAC", hash: mech.hash }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, own(data)));
}

async function digest(mech: ScramMechanism, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest(mech.hash, own(data)));
}

/** Hi(password, salt, iterations): SCRAM's salted password, what AlterUserScramCredentials carries. */
export async function scramSaltedPassword(mech: ScramMechanism, password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  return await hi(mech, password, salt, iterations);
}

async function hi(mech: ScramMechanism, password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: mech.hash, salt: own(salt), iterations }, k, mech.keyBytes * 8);
  return new Uint8Array(bits);
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** The credential a password gives with this salt and iteration count (what Kafka stores). */
export async function scramCredentialFromPassword(
  mech: ScramMechanism,
  password: string,
  salt: Uint8Array,
  iterations: number,
): Promise<ScramCredential> {
  return scramCredentialFromSaltedPassword(mech, await hi(mech, password, salt, iterations), salt, iterations);
}

/** The credential from its salted password (AlterUserScramCredentials carries salt and salted password). */
export async function scramCredentialFromSaltedPassword(
  mech: ScramMechanism,
  saltedPassword: Uint8Array,
  salt: Uint8Array,
  iterations: number,
): Promise<ScramCredential> {
  const clientKey = await hmac(mech, saltedPassword, encoder.encode("Client Key"));
  return {
    salt,
    storedKey: await digest(mech, clientKey),
    serverKey: await hmac(mech, saltedPassword, encoder.encode("Server Key")),
    iterations,
  };
}

export function scramCredentialToString(c: ScramCredential): string {
  return `salt=${base64Encode(c.salt)},stored_key=${base64Encode(c.storedKey)},server_key=${
    base64Encode(c.serverKey)
  },iterations=${c.iterations}`;
}

/** Parses Kafka's credential string; a string answer is what is wrong with it. */
export function scramCredentialFromString(mech: ScramMechanism, text: string): ScramCredential | string {
  const fields = new Map<string, string>();
  for (const token of text.split(",")) {
    const eq = token.indexOf("=");
    if (eq <= 0) return "credential is not key=value pairs";
    fields.set(token.slice(0, eq), token.slice(eq + 1));
  }
  if (fields.size !== 4) return "credential needs exactly salt, stored_key, server_key and iterations";
  const salt = base64Decode(fields.get("salt") ?? "");
  const storedKey = base64Decode(fields.get("stored_key") ?? "");
  const serverKey = base64Decode(fields.get("server_key") ?? "");
  const iterationsText = fields.get("iterations") ?? "";
  const iterations = /^[0-9]{1,9}$/.test(iterationsText) ? Number(iterationsText) : NaN;
  if (salt === null || salt.length === 0) return "salt is not base64";
  if (storedKey === null || storedKey.length !== mech.keyBytes) return `stored_key is not ${mech.keyBytes} bytes of base64`;
  if (serverKey === null || serverKey.length !== mech.keyBytes) return `server_key is not ${mech.keyBytes} bytes of base64`;
  if (!Number.isInteger(iterations) || iterations < scramIterationsMin || iterations > scramIterationsMax) {
    return `iterations must be between ${scramIterationsMin} and ${scramIterationsMax}`;
  }
  return { salt, storedKey, serverKey, iterations };
}

// Character classes of Kafka's ScramMessages patterns.
const saslName = "(?:[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]|=2C|=3D)+";
const printable = "[\\x21-\\x2B\\x2D-\\x7E]+";
const value = "[\\x01-\\x2B\\x2D-\\x7F]+";
const base64 = "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)?";
const extensions = `(?:,[A-Za-z]+=${value})*`;
const clientFirstPattern = new RegExp(
  `^n,(?:a=(${saslName}))?,n=(${saslName}),r=(${printable})(${extensions})$`,
);
const serverFirstPattern = new RegExp(`^r=(${printable}),s=(${base64}),i=([0-9]{1,9})${extensions}$`);
const clientFinalPattern = new RegExp(`^c=(${base64}),r=(${printable})${extensions},p=(${base64})$`);
const serverFinalPattern = new RegExp(`^(?:e=([\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]+)|v=(${base64}))${extensions}$`);

/** A SASL name's username: "=2C" is ",", "=3D" is "=" (RFC 5802 §5.1). */
export function scramUsername(name: string): string {
  return name.replace(/=2C|=3D/g, (m) => (m === "=2C" ? "," : "="));
}

/** The SASL name of a username, the inverse of scramUsername. */
export function scramSaslName(username: string): string {
  return username.replace(/[=,]/g, (c) => (c === "," ? "=2C" : "=3D"));
}

function text(token: Uint8Array): string | null {
  try {
    return decoder.decode(token);
  } catch {
    return null;
  }
}

/**
 * What a server step produced: the next token to send, done (authenticated as `principal`), or a
 * failure. `clientMessage` is what the client may be told (Kafka tells an unauthenticated peer
 * nothing about which part was wrong); `reason` is for the broker's own log.
 */
export type SaslServerStep =
  | { kind: "challenge"; token: Uint8Array }
  | { kind: "complete"; token: Uint8Array; username: string }
  | { kind: "failed"; reason: string; clientMessage: string };

/** Looks up a user's credential for a mechanism; undefined when the user has none. */
export type ScramCredentialLookup = (username: string, mech: ScramMechanism) => ScramCredential | undefined;

/**
 * The server side of one SCRAM exchange (Kafka's ScramSaslServer): two tokens in, two out. Any
 * failure is final; the exchange object is then done.
 */
export class ScramServerExchange {
  private state: "first" | "final" | "done" = "first";
  private clientFirstBare = "";
  private serverFirst = "";
  private nonce = "";
  private clientNonce = "";
  private gs2Header = "";
  private username = "";
  private credential: ScramCredential | undefined;

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly lookup: ScramCredentialLookup,
    /** The server's part of the nonce: printable, no ',' (RFC 5802), from a secure random source. */
    private readonly serverNonce: string,
  ) {}

  async evaluate(token: Uint8Array): Promise<SaslServerStep> {
    const state = this.state;
    this.state = "done";
    if (state === "first") return this.first(token);
    if (state === "final") return await this.final(token);
    return this.fail("unexpected SCRAM token after the exchange ended");
  }

  private fail(reason: string, clientMessage?: string): SaslServerStep {
    this.credential = undefined;
    return {
      kind: "failed",
      reason,
      clientMessage: clientMessage ??
        `Authentication failed during authentication due to invalid credentials with SASL mechanism ${this.mechanism.name}`,
    };
  }

  private first(token: Uint8Array): SaslServerStep {
    const message = text(token);
    const m = message === null ? null : clientFirstPattern.exec(message);
    if (m === null) return this.fail("invalid SCRAM client-first message");
    const [, authzid = "", name, clientNonce] = m;
    this.username = scramUsername(name);
    if (authzid !== "" && scramUsername(authzid) !== this.username) {
      return this.fail(
        "authorization id differs from username",
        "Authentication failed: Client requested an authorization id that is different from username",
      );
    }
    this.credential = this.lookup(this.username, this.mechanism);
    if (this.credential === undefined) return this.fail(`no ${this.mechanism.name} credential for user ${this.username}`);
    if (this.credential.iterations < scramIterationsMin) {
      return this.fail(`credential of ${this.username} has ${this.credential.iterations} iterations, fewer than ${scramIterationsMin}`);
    }
    this.gs2Header = message!.slice(0, message!.indexOf(",", 2) + 1);
    this.clientFirstBare = message!.slice(this.gs2Header.length);
    this.clientNonce = clientNonce;
    this.nonce = clientNonce + this.serverNonce;
    this.serverFirst = `r=${this.nonce},s=${base64Encode(this.credential.salt)},i=${this.credential.iterations}`;
    this.state = "final";
    return { kind: "challenge", token: encoder.encode(this.serverFirst) };
  }

  private async final(token: Uint8Array): Promise<SaslServerStep> {
    const message = text(token);
    const m = message === null ? null : clientFinalPattern.exec(message);
    if (m === null) return this.fail("invalid SCRAM client-final message");
    const [, channel, nonce, proofText] = m;
    // librdkafka before 2.6.1 repeats its own nonce in front of the combined one (librdkafka#4895);
    // Kafka 3.8.1+ accepts that form too. Anything else fails, as RFC 5802 requires.
    if (nonce !== this.nonce && nonce !== this.clientNonce + this.nonce) {
      return this.fail("invalid nonce in the SCRAM client-final message");
    }
    // Without channel binding, c= carries the gs2 header the client sent first (RFC 5802 §7).
    if (base64Decode(channel) === null || text(base64Decode(channel)!) !== this.gs2Header) {
      return this.fail("SCRAM channel binding does not repeat the gs2 header");
    }
    const proof = base64Decode(proofText);
    const credential = this.credential!;
    if (proof === null || proof.length !== this.mechanism.keyBytes) return this.fail("SCRAM proof has the wrong length");
    const authMessage = encoder.encode(`${this.clientFirstBare},${this.serverFirst},c=${channel},r=${nonce}`);
    const clientSignature = await hmac(this.mechanism, credential.storedKey, authMessage);
    const storedKey = await digest(this.mechanism, xor(proof, clientSignature));
    if (!constantTimeEqual(storedKey, credential.storedKey)) return this.fail(`wrong password for user ${this.username}`);
    const serverSignature = await hmac(this.mechanism, credential.serverKey, authMessage);
    this.credential = undefined;
    return { kind: "complete", token: encoder.encode(`v=${base64Encode(serverSignature)}`), username: this.username };
  }
}

/**
 * The client side of one SCRAM exchange (for the tools and the broker's own connections):
 * first() gives the client-first token, final(serverFirst) the client-final token, and
 * verify(serverFinal) checks the server knew the credential too.
 */
export class ScramClientExchange {
  private clientFirstBare = "";
  private serverSignature: Uint8Array | undefined;

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly username: string,
    private readonly password: string,
    private readonly clientNonce: string,
  ) {}

  first(): Uint8Array {
    this.clientFirstBare = `n=${scramSaslName(this.username)},r=${this.clientNonce}`;
    return encoder.encode(`n,,${this.clientFirstBare}`);
  }

  /** The client-final token, or a string saying what is wrong with the server's first message. */
  async final(serverFirstToken: Uint8Array): Promise<Uint8Array | string> {
    const serverFirst = text(serverFirstToken);
    const m = serverFirst === null ? null : serverFirstPattern.exec(serverFirst);
    if (m === null) return "invalid SCRAM server-first message";
    const [, nonce, saltText, iterationsText] = m;
    const iterations = Number(iterationsText);
    const salt = base64Decode(saltText);
    if (!nonce.startsWith(this.clientNonce) || nonce.length === this.clientNonce.length) return "server nonce does not extend ours";
    if (salt === null || iterations < scramIterationsMin || iterations > scramIterationsMax) {
      return `server asked for ${iterations} iterations, outside ${scramIterationsMin}..${scramIterationsMax}`;
    }
    const salted = await hi(this.mechanism, this.password, salt, iterations);
    const clientKey = await hmac(this.mechanism, salted, encoder.encode("Client Key"));
    const storedKey = await digest(this.mechanism, clientKey);
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = encoder.encode(`${this.clientFirstBare},${serverFirst},${withoutProof}`);
    const clientSignature = await hmac(this.mechanism, storedKey, authMessage);
    const serverKey = await hmac(this.mechanism, salted, encoder.encode("Server Key"));
    this.serverSignature = await hmac(this.mechanism, serverKey, authMessage);
    return encoder.encode(`${withoutProof},p=${base64Encode(xor(clientKey, clientSignature))}`);
  }

  /** null when the server proved it holds the credential; otherwise what went wrong. */
  verify(serverFinalToken: Uint8Array): string | null {
    const serverFinal = text(serverFinalToken);
    const m = serverFinal === null ? null : serverFinalPattern.exec(serverFinal);
    if (m === null) return "invalid SCRAM server-final message";
    if (m[1] !== undefined) return `server refused: ${m[1]}`;
    const signature = base64Decode(m[2]);
    if (this.serverSignature === undefined || signature === null || !constantTimeEqual(signature, this.serverSignature)) {
      return "server signature does not match: the server does not hold this user's credential";
    }
    return null;
  }
}
