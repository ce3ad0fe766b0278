// The TLS part of a listener's configuration, in Kafka's keys. Each key is read in its listener-
// prefixed form first (listener.name.<l>.ssl.*, <l> lower-cased), then in its plain form:
//
//   ssl.keystore.type            PEM (the only type strand reads; unset means PEM)
//   ssl.keystore.location        a PEM file holding the private key and its certificate chain
//   ssl.keystore.certificate.chain / ssl.keystore.key   the same, inline (KIP-651)
//   ssl.key.password             the password of an encrypted private key
//   ssl.truststore.type          PEM
//   ssl.truststore.location      a PEM file of trusted certificates
//   ssl.truststore.certificates  the same, inline
//   ssl.client.auth              none (default) | requested | required; on a SASL_SSL listener only
//                                its listener-prefixed form counts (Kafka's KIP-684)
//   ssl.enabled.protocols        TLSv1.2,TLSv1.3 (default)
//   ssl.cipher.suites            empty (default): the runtime's choice
//   ssl.principal.mapping.rules  DEFAULT
//   ssl.endpoint.identification.algorithm   https (default) or empty: whether the broker's own
//                                connections check the peer's host name
//
// Files are named here and read by tls_settings.ts when the broker starts (and again when they
// change). Invariants: a TLS listener has a keystore, from a file or inline but not both; a
// truststore comes from one source; every error names its key.
import { SslPrincipalMapper } from "../util/mod.ts";
import { ConfigError, splitList } from "./config.ts";

export type TlsClientAuthSetting = "none" | "requested" | "required";

/** A PEM source: a file read at start-up (and watched), or text given inline. */
export type PemSource = { file: string; key: string } | { inline: string; key: string };

export interface ListenerSsl {
  /** Key and chain in one file, or inline chain + key. */
  readonly keystore: { file: string; key: string } | { chain: string; privateKey: string; key: string };
  readonly keyPassword: string | undefined;
  readonly truststore: PemSource | null;
  readonly clientAuth: TlsClientAuthSetting;
  readonly protocols: ("TLSv1.2" | "TLSv1.3")[];
  readonly cipherSuites: string[] | undefined;
  readonly principalMapper: SslPrincipalMapper;
  /** ssl.endpoint.identification.algorithm=https: the broker's own connections check host names. */
  readonly verifyHostname: boolean;
}

const sslKeys = [
  "keystore.type",
  "keystore.location",
  "keystore.password",
  "keystore.certificate.chain",
  "keystore.key",
  "key.password",
  "truststore.type",
  "truststore.location",
  "truststore.password",
  "truststore.certificates",
  "client.auth",
  "enabled.protocols",
  "cipher.suites",
  "principal.mapping.rules",
  "endpoint.identification.algorithm",
  "protocol",
];
const sslKeyPattern = new RegExp(`^(listener\\.name\\.[a-z0-9_]+\\.)?ssl\\.(${sslKeys.map((k) => k.replaceAll(".", "\\.")).join("|")})$`);

/** The ssl.* keys this file reads, plain or listener-prefixed. */
export function isSslKey(key: string): boolean {
  return sslKeyPattern.test(key);
}

/** A listener's TLS settings (its protocol is SSL or SASL_SSL); throws ConfigError naming the key. */
export function parseListenerSsl(input: ReadonlyMap<string, string>, name: string, sasl: boolean): ListenerSsl {
  const prefix = `listener.name.${name.toLowerCase()}.`;
  /** The key in force for ssl.<k>: the listener-prefixed one when set. */
  const keyOf = (k: string) => (input.has(`${prefix}ssl.${k}`) ? `${prefix}ssl.${k}` : `ssl.${k}`);
  const get = (k: string): [string, string | undefined] => {
    const key = keyOf(k);
    const v = input.get(key)?.trim();
    return [key, v === "" && k !== "endpoint.identification.algorithm" ? undefined : v];
  };
  for (const store of ["keystore", "truststore"]) {
    const [key, type] = get(`${store}.type`);
    if (type !== undefined && type.toUpperCase() !== "PEM") {
      throw new ConfigError(key, `${type} is not supported: strand reads PEM ${store}s only (ssl.${store}.type=PEM)`);
    }
    const [pwKey, pw] = get(`${store}.password`);
    // Kafka refuses it too: a PEM store has no password, only its key may (ssl.key.password).
    if (pw !== undefined) throw new ConfigError(pwKey, `a PEM ${store} has no password${store === "keystore" ? "; an encrypted key takes ssl.key.password" : ""}`);
  }
  const [locKey, location] = get("keystore.location");
  const [chainKey, chain] = get("keystore.certificate.chain");
  const [pkKey, privateKey] = get("keystore.key");
  let keystore: ListenerSsl["keystore"];
  if (location !== undefined) {
    if (chain !== undefined || privateKey !== undefined) throw new ConfigError(locKey, `set ${locKey} or ${chainKey} with ${pkKey}, not both`);
    keystore = { file: location, key: locKey };
  } else if (chain !== undefined && privateKey !== undefined) {
    keystore = { chain, privateKey, key: chainKey };
  } else {
    const missing = chain === undefined && privateKey === undefined ? locKey : chain === undefined ? chainKey : pkKey;
    throw new ConfigError(missing, `listener ${name} speaks TLS and needs a keystore: ${locKey} (a PEM file with the key and its chain), or ${chainKey} and ${pkKey}`);
  }
  const [tsLocKey, tsLocation] = get("truststore.location");
  const [tsCertsKey, tsCerts] = get("truststore.certificates");
  if (tsLocation !== undefined && tsCerts !== undefined) throw new ConfigError(tsLocKey, `set ${tsLocKey} or ${tsCertsKey}, not both`);
  const truststore: PemSource | null = tsLocation !== undefined
    ? { file: tsLocation, key: tsLocKey }
    : tsCerts !== undefined ? { inline: tsCerts, key: tsCertsKey } : null;
  // KIP-684: on SASL_SSL, clients are authenticated by SASL; only an explicit per-listener setting asks for certificates.
  const authKey = sasl ? `${prefix}ssl.client.auth` : keyOf("client.auth");
  const authText = (input.get(authKey)?.trim() || "none").toLowerCase();
  if (authText !== "none" && authText !== "requested" && authText !== "required") {
    throw new ConfigError(authKey, `"${authText}" is not one of none, requested, required`);
  }
  const clientAuth = authText as TlsClientAuthSetting;
  if (clientAuth !== "none" && truststore === null) {
    throw new ConfigError(authKey, `ssl.client.auth=${clientAuth} needs a truststore to verify client certificates (${tsLocKey} or ${tsCertsKey})`);
  }
  const [protoKey, protoText] = get("enabled.protocols");
  const protocols = splitList(protoText ?? "TLSv1.2,TLSv1.3") as ("TLSv1.2" | "TLSv1.3")[];
  for (const p of protocols) {
    if (p !== "TLSv1.2" && p !== "TLSv1.3") throw new ConfigError(protoKey, `${p} is not supported; use TLSv1.2 and/or TLSv1.3`);
  }
  if (protocols.length === 0) throw new ConfigError(protoKey, "at least one protocol is needed (TLSv1.2, TLSv1.3)");
  const [, suitesText] = get("cipher.suites");
  const suites = splitList(suitesText ?? "");
  const [rulesKey, rules] = get("principal.mapping.rules");
  let principalMapper: SslPrincipalMapper;
  try {
    principalMapper = SslPrincipalMapper.fromRules(rules);
  } catch (e) {
    throw new ConfigError(rulesKey, (e as Error).message);
  }
  const [eiaKey, eia] = get("endpoint.identification.algorithm");
  const algorithm = (eia ?? "https").toLowerCase();
  if (algorithm !== "https" && algorithm !== "") throw new ConfigError(eiaKey, `"${eia}" is not https or empty`);
  return {
    keystore,
    keyPassword: get("key.password")[1],
    truststore,
    clientAuth,
    protocols,
    cipherSuites: suites.length === 0 ? undefined : suites,
    principalMapper,
    verifyHostname: algorithm === "https",
  };
}
