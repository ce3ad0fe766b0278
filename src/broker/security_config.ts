// The security part of the broker's configuration, in Kafka's keys: which security protocol each
// listener speaks, and the SASL settings of each SASL listener.
//
//   listener.security.protocol.map   NAME:PROTOCOL,...  (default maps each protocol's own name)
//   sasl.enabled.mechanisms          PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (Kafka's default GSSAPI is
//                                    not offered: a SASL listener must name its mechanisms)
//   listener.name.<l>.sasl.enabled.mechanisms          per-listener override of the above
//   listener.name.<l>.<mech>.sasl.jaas.config          the listener's login module for a mechanism
//                                    (<l> and <mech> lower-cased, as Kafka's ListenerName prefixes);
//                                    PLAIN's users are its user_<name>="<password>" options
//   connections.max.reauth.ms        0 (never): a session's lifetime (KIP-368)
//   connection.failed.authentication.delay.ms   100: the answer to a failed login waits this long
//
// Invariants: every SASL listener has at least one mechanism, each of which strand implements;
// a PLAIN listener has a JAAS config with PlainLoginModule; errors name the key.
import { jaasPlainUsers, type JaasLoginModule, parseJaasConfig } from "../protocol/mod.ts";
import { saslTokenBytesMax } from "../util/mod.ts";
import { ConfigError, splitList } from "./config.ts";
import { isSslKey, type ListenerSsl, parseListenerSsl } from "./ssl_config.ts";

export type SecurityProtocol = "PLAINTEXT" | "SSL" | "SASL_PLAINTEXT" | "SASL_SSL";
const securityProtocols: readonly SecurityProtocol[] = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"];
export const saslMechanismsSupported = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] as const;

export const defaultSecurityProtocolMap = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL";

export interface ListenerSasl {
  readonly mechanisms: readonly string[];
  /** PLAIN's users (name → password); empty when PLAIN is not enabled. */
  readonly plainUsers: ReadonlyMap<string, string>;
  /** The listener's JAAS login module per mechanism, as configured. */
  readonly jaas: ReadonlyMap<string, JaasLoginModule>;
}

export interface ListenerSecurity {
  readonly protocol: SecurityProtocol;
  /** Set when the protocol is SASL_PLAINTEXT or SASL_SSL. */
  readonly sasl: ListenerSasl | null;
  /** Set when the protocol is SSL or SASL_SSL (ssl_config.ts). */
  readonly ssl: ListenerSsl | null;
}

/** What the broker's own connections to other brokers log in with (Kafka's inter-broker SASL). */
export interface InterBrokerSasl {
  readonly mechanism: "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512";
  readonly username: string;
  readonly password: string;
}

export interface SecurityConfig {
  /** By listener name (upper case, as `listeners` names them). */
  readonly listeners: ReadonlyMap<string, ListenerSecurity>;
  /**
   * The inter-broker listener's login, when it speaks SASL: sasl.mechanism.inter.broker.protocol
   * and the username/password options of that mechanism's JAAS config on the listener.
   */
  readonly interBrokerSasl: InterBrokerSasl | null;
  /** The listener other brokers are reached on (Kafka's inter.broker.listener.name). */
  readonly interBrokerListener: string;
  readonly connectionsMaxReauthMs: number;
  readonly connectionFailedAuthenticationDelayMs: number;
  /** sasl.server.max.receive.size: bytes a peer may send before it has authenticated. */
  readonly saslServerMaxReceiveBytes: number;
}

/** Keys this file reads besides the fixed ones: listener-prefixed SASL settings. */
export function isListenerPrefixedSecurityKey(key: string): boolean {
  return isSslKey(key) || /^listener\.name\.[a-z0-9_]+\.(sasl\.enabled\.mechanisms|[a-z0-9-]+\.sasl\.jaas\.config)$/.test(key);
}

/** The security protocol map, NAME:PROTOCOL pairs; throws ConfigError naming the key. */
export function parseSecurityProtocolMap(text: string): Map<string, SecurityProtocol> {
  const key = "listener.security.protocol.map";
  const map = new Map<string, SecurityProtocol>();
  for (const entry of splitList(text)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*):([A-Za-z_]+)$/.exec(entry);
    if (m === null) throw new ConfigError(key, `"${entry}" is not NAME:PROTOCOL`);
    const name = m[1].toUpperCase();
    const protocol = m[2].toUpperCase() as SecurityProtocol;
    if (!securityProtocols.includes(protocol)) throw new ConfigError(key, `${protocol} is not one of ${securityProtocols.join(", ")}`);
    if (map.has(name)) throw new ConfigError(key, `listener name ${name} is mapped twice`);
    map.set(name, protocol);
  }
  return map;
}

function mechanismsFrom(key: string, text: string): string[] {
  const mechanisms = splitList(text).map((m) => m.toUpperCase());
  if (mechanisms.length === 0) throw new ConfigError(key, "a SASL listener needs at least one mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)");
  for (const m of mechanisms) {
    if (!(saslMechanismsSupported as readonly string[]).includes(m)) {
      const why = m === "GSSAPI" || m === "OAUTHBEARER" ? `${m} is not supported by strand` : `unknown mechanism ${m}`;
      throw new ConfigError(key, `${why}; use ${saslMechanismsSupported.join(", ")}`);
    }
  }
  return mechanisms;
}

/**
 * Resolves the security settings of each listener from the raw pairs (input as given, before
 * defaults). `listenerNames` are the names of `listeners`, upper case.
 */
export function parseSecurityConfig(input: ReadonlyMap<string, string>, listenerNames: readonly string[]): SecurityConfig {
  const get = (k: string) => input.get(k)?.trim();
  const protocols = parseSecurityProtocolMap(get("listener.security.protocol.map") ?? defaultSecurityProtocolMap);
  const listeners = new Map<string, ListenerSecurity>();
  for (const name of listenerNames) {
    const protocol = protocols.get(name);
    if (protocol === undefined) {
      throw new ConfigError("listener.security.protocol.map", `listener ${name} has no security protocol (add ${name}:PLAINTEXT, ${name}:SASL_SSL, ...)`);
    }
    const sasl = protocol.startsWith("SASL_") ? listenerSasl(input, name) : null;
    const ssl = protocol.endsWith("SSL") ? parseListenerSsl(input, name, sasl !== null) : null;
    listeners.set(name, { protocol, sasl, ssl });
  }
  return {
    listeners,
    ...interBroker(input, listenerNames, listeners),
    connectionsMaxReauthMs: nonNegative(input, "connections.max.reauth.ms", 0),
    connectionFailedAuthenticationDelayMs: nonNegative(input, "connection.failed.authentication.delay.ms", 100),
    saslServerMaxReceiveBytes: nonNegative(input, "sasl.server.max.receive.size", saslTokenBytesMax),
  };
}

function listenerSasl(input: ReadonlyMap<string, string>, name: string): ListenerSasl {
  const prefix = `listener.name.${name.toLowerCase()}.`;
  const mechanismsKey = input.has(`${prefix}sasl.enabled.mechanisms`) ? `${prefix}sasl.enabled.mechanisms` : "sasl.enabled.mechanisms";
  const mechanismsText = input.get(mechanismsKey);
  if (mechanismsText === undefined) {
    throw new ConfigError(
      "sasl.enabled.mechanisms",
      `listener ${name} speaks SASL but no mechanism is enabled (Kafka's default, GSSAPI, is not supported): set PLAIN, SCRAM-SHA-256 and/or SCRAM-SHA-512`,
    );
  }
  const mechanisms = mechanismsFrom(mechanismsKey, mechanismsText);
  const jaas = new Map<string, JaasLoginModule>();
  for (const mech of mechanisms) {
    const key = `${prefix}${mech.toLowerCase()}.sasl.jaas.config`;
    const text = input.get(key);
    if (text === undefined) continue;
    const module = parseJaasConfig(text);
    if (typeof module === "string") throw new ConfigError(key, module);
    jaas.set(mech, module);
  }
  let plainUsers = new Map<string, string>();
  if (mechanisms.includes("PLAIN")) {
    const key = `${prefix}plain.sasl.jaas.config`;
    const module = jaas.get("PLAIN");
    if (module === undefined || !module.loginModule.endsWith("PlainLoginModule")) {
      throw new ConfigError(key, `listener ${name} enables PLAIN, which needs org.apache.kafka.common.security.plain.PlainLoginModule with user_<name>="<password>" options`);
    }
    plainUsers = jaasPlainUsers(module);
  }
  return { mechanisms, plainUsers, jaas };
}

/**
 * The inter-broker listener is inter.broker.listener.name, else the listener whose protocol is
 * security.inter.broker.protocol (PLAINTEXT by default), else (strand runs one listener) the only
 * one. A SASL inter-broker listener needs sasl.mechanism.inter.broker.protocol and the broker's own
 * username and password in that mechanism's JAAS config; only a cluster (zookeeper.connect) opens
 * inter-broker connections, so a single node does not.
 */
function interBroker(
  input: ReadonlyMap<string, string>,
  names: readonly string[],
  listeners: ReadonlyMap<string, ListenerSecurity>,
): { interBrokerListener: string; interBrokerSasl: InterBrokerSasl | null } {
  const byName = input.get("inter.broker.listener.name")?.trim().toUpperCase();
  const byProtocol = input.get("security.inter.broker.protocol")?.trim().toUpperCase();
  if (byName !== undefined && byProtocol !== undefined) {
    throw new ConfigError("inter.broker.listener.name", "set inter.broker.listener.name or security.inter.broker.protocol, not both");
  }
  let name = byName;
  if (name === undefined && byProtocol !== undefined) name = names.find((n) => listeners.get(n)!.protocol === byProtocol);
  name ??= names.length === 1 ? names[0] : names.find((n) => listeners.get(n)!.protocol === "PLAINTEXT");
  const key = byName !== undefined ? "inter.broker.listener.name" : "security.inter.broker.protocol";
  if (name === undefined || !listeners.has(name)) {
    throw new ConfigError(key, `no listener ${byName ?? `speaking ${byProtocol ?? "PLAINTEXT"}`} among ${names.join(", ")}`);
  }
  const sasl = listeners.get(name)!.sasl;
  if (sasl === null || input.get("zookeeper.connect") === undefined) return { interBrokerListener: name, interBrokerSasl: null };
  const mechKey = "sasl.mechanism.inter.broker.protocol";
  const mechanism = (input.get(mechKey)?.trim() ?? "GSSAPI").toUpperCase();
  if (mechanism !== "PLAIN" && mechanism !== "SCRAM-SHA-256" && mechanism !== "SCRAM-SHA-512") {
    throw new ConfigError(mechKey, `${mechanism} is not supported; the inter-broker listener ${name} needs PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`);
  }
  if (!sasl.mechanisms.includes(mechanism)) throw new ConfigError(mechKey, `${mechanism} is not enabled on listener ${name}`);
  const jaasKey = `listener.name.${name.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config`;
  const module = sasl.jaas.get(mechanism);
  const username = module?.options.get("username");
  const password = module?.options.get("password");
  if (username === undefined || password === undefined) {
    throw new ConfigError(jaasKey, `the broker's own login on ${name} needs username="..." and password="..." options`);
  }
  return { interBrokerListener: name, interBrokerSasl: { mechanism, username, password } };
}

function nonNegative(input: ReadonlyMap<string, string>, key: string, dflt: number): number {
  const text = input.get(key)?.trim();
  if (text === undefined) return dflt;
  if (!/^\d{1,15}$/.test(text)) throw new ConfigError(key, `"${text}" is not a non-negative integer`);
  return Number(text);
}
