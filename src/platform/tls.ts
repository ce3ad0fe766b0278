// TLS settings as the runtimes take them, checked once when given (listen, connect, setTls) so a
// bad key or an impossible setting is an error for the operator, never a failure per connection.
// Both bun.ts and deno.ts start from prepareTls(); each then maps PreparedTls onto its own API.
//
// Keys: every accepted PEM key form (PKCS#8, PKCS#1, SEC1, encrypted PKCS#8, legacy encrypted
// PKCS#1) is read with node:crypto, which both runtimes implement natively, and handed on as
// unencrypted PKCS#8: one code path whatever the runtime's TLS library accepts, and a wrong
// password or a key of another certificate is refused here with a message that says so.
// node:crypto is loaded when TLS is first set up: evaluating it costs tens of ms of CPU under Bun,
// which every start paid, TLS configured or not (issue 18 start-up).
import type * as Crypto from "node:crypto";
import process from "node:process";
import type { TlsClientAuth, TlsCommonOptions, TlsProtocol, TlsServerOptions } from "./types.ts";

let crypto: typeof Crypto | undefined;
function nodeCrypto(): typeof Crypto {
  return (crypto ??= process.getBuiltinModule("node:crypto") as typeof Crypto);
}

export interface PreparedTls {
  /** Unencrypted PKCS#8 PEM, or undefined when no own certificate is configured. */
  key?: string;
  cert?: string;
  ca?: string;
  minVersion: TlsProtocol;
  maxVersion: TlsProtocol;
  /** OpenSSL names of the TLS 1.2 suites asked for; undefined: the runtime's defaults. */
  tls12Ciphers?: string[];
  /** TLS 1.3 suite names asked for (the same in IANA and OpenSSL spelling). */
  tls13Ciphers?: string[];
  clientAuth: TlsClientAuth;
}

const protocolOrder: TlsProtocol[] = ["TLSv1.2", "TLSv1.3"];

/** TLS 1.3's suites: IANA and OpenSSL spell them alike. */
export const tls13Suites = ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"];

// Java (and so Kafka's ssl.cipher.suites) names suites as IANA does; OpenSSL and BoringSSL take
// their own names. The suites a TLS 1.2 peer of today negotiates; an IANA name outside this table
// is refused rather than guessed.
const ianaToOpenSsl: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: "ECDHE-ECDSA-AES128-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: "ECDHE-ECDSA-AES256-SHA",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: "ECDHE-RSA-AES128-SHA",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: "ECDHE-RSA-AES256-SHA",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
};

/** Checks and normalises opts; throws an Error naming the setting at fault. */
export function prepareTls(opts: TlsCommonOptions & { clientAuth?: TlsClientAuth }, side: "server" | "client"): PreparedTls {
  const out: PreparedTls = { ...versionRange(opts.protocols), clientAuth: opts.clientAuth ?? "none" };
  if (!["none", "requested", "required"].includes(out.clientAuth)) {
    throw new Error(`TLS clientAuth must be none, requested or required, not ${JSON.stringify(out.clientAuth)}`);
  }
  if (side === "server" && (opts.certificateChain === undefined || opts.privateKey === undefined)) {
    throw new Error("a TLS listener needs certificateChain and privateKey");
  }
  if ((opts.certificateChain === undefined) !== (opts.privateKey === undefined)) {
    throw new Error("TLS certificateChain and privateKey go together: one was given without the other");
  }
  if (opts.certificateChain !== undefined && opts.privateKey !== undefined) {
    out.cert = opts.certificateChain;
    out.key = readKey(opts.privateKey, opts.privateKeyPassword, opts.certificateChain);
  }
  if (opts.trustedCertificates !== undefined) {
    checkCertificates(opts.trustedCertificates, "trustedCertificates");
    out.ca = opts.trustedCertificates;
  }
  if (side === "server" && out.clientAuth !== "none" && out.ca === undefined) {
    throw new Error(`TLS clientAuth=${out.clientAuth} needs trustedCertificates to verify client certificates against`);
  }
  if (opts.cipherSuites !== undefined) Object.assign(out, splitCipherSuites(opts.cipherSuites, out));
  return out;
}

function versionRange(protocols: TlsProtocol[] | undefined): { minVersion: TlsProtocol; maxVersion: TlsProtocol } {
  const list = protocols ?? protocolOrder;
  if (list.length === 0) throw new Error("TLS protocols is empty: enable TLSv1.2, TLSv1.3 or both");
  for (const p of list) {
    if (!protocolOrder.includes(p)) throw new Error(`TLS protocol ${JSON.stringify(p)} is not supported (TLSv1.2, TLSv1.3)`);
  }
  const enabled = protocolOrder.filter((p) => list.includes(p));
  return { minVersion: enabled[0], maxVersion: enabled[enabled.length - 1] };
}

function splitCipherSuites(names: string[], range: { minVersion: TlsProtocol; maxVersion: TlsProtocol }) {
  const tls12: string[] = [];
  const tls13: string[] = [];
  for (const name of names) {
    if (tls13Suites.includes(name)) tls13.push(name);
    else if (ianaToOpenSsl[name] !== undefined) tls12.push(ianaToOpenSsl[name]);
    else if (name.startsWith("TLS_") || !/^[A-Z0-9-]+$/.test(name)) {
      throw new Error(`TLS cipher suite ${name} is not known here; use an ECDHE suite with GCM or ChaCha20, or its OpenSSL name`);
    } else tls12.push(name); // an OpenSSL name, taken as it is
  }
  if (range.minVersion === "TLSv1.2" && tls12.length === 0) {
    throw new Error("TLS cipherSuites lists no TLS 1.2 suite while TLSv1.2 is enabled");
  }
  if (range.maxVersion === "TLSv1.3" && tls13.length === 0) {
    throw new Error("TLS cipherSuites lists no TLS 1.3 suite while TLSv1.3 is enabled");
  }
  return { tls12Ciphers: tls12, tls13Ciphers: tls13 };
}

function readKey(pem: string, password: string | undefined, chain: string): string {
  let key;
  try {
    key = nodeCrypto().createPrivateKey(password === undefined ? pem : { key: pem, passphrase: password });
  } catch (err) {
    const encrypted = pem.includes("ENCRYPTED");
    const why = encrypted
      ? password === undefined ? "it is encrypted and no privateKeyPassword was given" : "wrong privateKeyPassword?"
      : "not a PEM private key (PKCS#8, PKCS#1 or SEC1)";
    throw new Error(`TLS privateKey cannot be read: ${why} (${(err as Error).message})`, { cause: err });
  }
  const leaf = firstCertificate(chain, "certificateChain");
  if (!leaf.checkPrivateKey(key)) {
    const subject = leaf.subject.replaceAll("\n", ", ");
    throw new Error(`TLS privateKey does not belong to the first certificate of certificateChain (${subject})`);
  }
  return key.export({ type: "pkcs8", format: "pem" }) as string;
}

const pemCertificate = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

function firstCertificate(pem: string, what: string): Crypto.X509Certificate {
  const first = pem.match(pemCertificate)?.[0];
  if (first === undefined) throw new Error(`TLS ${what} holds no PEM certificate`);
  try {
    return new (nodeCrypto().X509Certificate)(first);
  } catch (err) {
    throw new Error(`TLS ${what}: the certificate cannot be parsed (${(err as Error).message})`, { cause: err });
  }
}

function checkCertificates(pem: string, what: string): void {
  const all = pem.match(pemCertificate) ?? [];
  if (all.length === 0) throw new Error(`TLS ${what} holds no PEM certificate`);
  for (const one of all) {
    try {
      new (nodeCrypto().X509Certificate)(one);
    } catch (err) {
      throw new Error(`TLS ${what}: a certificate cannot be parsed (${(err as Error).message})`, { cause: err });
    }
  }
}

/** Settings a reload may not change: they are the listener's, not the certificate's. */
export function checkReload(before: PreparedTls, after: PreparedTls): void {
  if (before.clientAuth !== after.clientAuth) {
    throw new Error(`TLS clientAuth cannot change on reload (${before.clientAuth} -> ${after.clientAuth}): restart the listener`);
  }
}

/** A handshake error as one line: the library's message and its code when it has one. */
export function tlsErrorReason(err: unknown): string {
  const code = (err as { code?: string } | null)?.code;
  const message = (err as Error | null)?.message ?? String(err);
  return code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
}

/** A copy of a certificate's DER bytes as a plain Uint8Array (not a Buffer view into a pool). */
export function derBytes(raw: Uint8Array | undefined | null): Uint8Array | null {
  if (raw === undefined || raw === null || raw.length === 0) return null;
  return new Uint8Array(raw);
}
