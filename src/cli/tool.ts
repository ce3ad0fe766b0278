// What every client tool of the CLI shares: argument parsing with --help, --bootstrap-server,
// a ClusterClient on the runtime's platform, buffered stdout, stdin lines, and the exit rules:
// 0 on success; 1 with one line on stderr when the cluster says no or cannot be reached; 2 with
// one line for a bad command line. No stack traces reach the user.
import process from "node:process";
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";
import { ClientError, ClusterClient, parseBootstrapServers, type SaslCredentials } from "../client/mod.ts";
import { parseJaasConfig } from "../protocol/mod.ts";
import { parseProperties } from "./properties.ts";
import { loadPlatform, type Platform, type TlsClientOptions } from "../platform/mod.ts";
import { consoleLineBytesMax, splitPem } from "../util/mod.ts";

/** A bad command line: exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

type Option = { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean | string[] };

/** Options every client tool takes. */
export const commonOptions: Record<string, Option> = {
  "bootstrap-server": { type: "string" },
  "command-config": { type: "string" },
  "request-timeout-ms": { type: "string" },
  help: { type: "boolean", short: "h" },
};

/** The --help lines of commonOptions, in the column layout most tools' usage texts use. */
export const commonOptionsUsage = `  --bootstrap-server HOST:PORT[,...]   brokers to start from (required)
  --request-timeout-ms MS              how long one request may take (default 30000)
  --command-config FILE                Kafka client properties: security.protocol, sasl.*, ssl.truststore.*, ssl.keystore.*
  -h, --help                           this text`;

export type Values = Record<string, string | boolean | string[] | undefined>;

/**
 * Parses a tool's arguments (strictly: unknown flags are a UsageError). With --help, prints the
 * usage and exits 0.
 */
export function parseToolArgs(args: string[], options: Record<string, Option>, usage: string, positionals = 0): { values: Values; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...commonOptions, ...options }, strict: true, allowPositionals: positionals > 0 });
  } catch (e) {
    throw new UsageError(firstLine((e as Error).message));
  }
  if (parsed.values.help) {
    process.stdout.write(usage.trimEnd() + "\n");
    process.exit(0);
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`);
  return { values: parsed.values as Values, positionals: parsed.positionals };
}

function firstLine(s: string): string {
  return s.split("\n")[0].replace(/\. To specify a positional argument.*$/, "");
}

export function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

export function required(values: Values, name: string): string {
  const v = str(values, name);
  if (v === undefined || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

export function list(values: Values, name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
}

/** An integer flag within [min, max], or `fallback` when absent. */
export function int(values: Values, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = str(values, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v.trim() === "" || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} takes an integer from ${min} to ${max}, got "${v}"`);
  }
  return n;
}

/** Repeated KEY=VALUE flags as an object. */
export function keyValues(values: Values, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list(values, name)) {
    const i = kv.indexOf("=");
    if (i <= 0) throw new UsageError(`--${name} takes KEY=VALUE, got "${kv}"`);
    out[kv.slice(0, i).trim()] = kv.slice(i + 1);
  }
  return out;
}

/** --acks: all/-1, 1, 0. */
export function acks(values: Values, fallback: number): number {
  const v = str(values, "acks");
  if (v === undefined) return fallback;
  if (v === "all" || v === "-1") return -1;
  if (v === "0" || v === "1") return Number(v);
  throw new UsageError(`--acks takes all, -1, 0 or 1, got "${v}"`);
}

const codecs: Record<string, number> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

/** --compression: none, gzip, snappy, lz4, zstd. */
export function compression(values: Values): number {
  const v = str(values, "compression") ?? "none";
  const c = codecs[v];
  if (c === undefined) throw new UsageError(`--compression takes none, gzip, snappy, lz4 or zstd, got "${v}"`);
  return c;
}

let platformPromise: Promise<Platform> | null = null;

export function platform(): Promise<Platform> {
  platformPromise ??= loadPlatform();
  return platformPromise;
}

/** A ClusterClient for --bootstrap-server (required); closed after fn, whatever happens. */
export async function withCluster<T>(values: Values, fn: (c: ClusterClient) => Promise<T>): Promise<T> {
  const bootstrapText = required(values, "bootstrap-server");
  let bootstrap;
  try {
    bootstrap = parseBootstrapServers(bootstrapText);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const requestTimeoutMs = int(values, "request-timeout-ms", 30_000, 1, 2_147_483_647);
  const security = commandConfigSecurity(values);
  const c = new ClusterClient(await platform(), { bootstrap, clientId: "strand-cli", requestTimeoutMs, ...security });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

/** What --command-config says about reaching the brokers: a SASL login and/or TLS. */
export interface CommandConfigSecurity {
  sasl?: SaslCredentials;
  tls?: TlsClientOptions;
}

/**
 * --command-config FILE: Kafka's client properties, as Kafka's tools take them. Read here:
 * security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL); sasl.mechanism and the username
 * and password of sasl.jaas.config (PlainLoginModule or ScramLoginModule); for TLS,
 * ssl.truststore.location or ssl.truststore.certificates (PEM), a client certificate from
 * ssl.keystore.location (PEM: key and chain in one file) or ssl.keystore.certificate.chain with
 * ssl.keystore.key, ssl.key.password, ssl.endpoint.identification.algorithm (https or empty).
 * Other client keys are ignored.
 */
export function commandConfigSecurity(values: Values): CommandConfigSecurity {
  const file = str(values, "command-config");
  if (file === undefined) return {};
  let props: Map<string, string>;
  try {
    props = parseProperties(readFileSync(file, "utf8"));
  } catch (e) {
    throw new UsageError(`--command-config ${file}: ${(e as Error).message}`);
  }
  const protocol = (props.get("security.protocol") ?? "PLAINTEXT").toUpperCase();
  if (!["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].includes(protocol)) {
    throw new UsageError(`--command-config ${file}: security.protocol ${protocol} is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL`);
  }
  return {
    ...(protocol.startsWith("SASL_") ? { sasl: saslOf(file, props) } : {}),
    ...(protocol.endsWith("SSL") ? { tls: tlsOf(file, props) } : {}),
  };
}

function saslOf(file: string, props: Map<string, string>): SaslCredentials {
  const mechanism = (props.get("sasl.mechanism") ?? "GSSAPI").toUpperCase();
  if (mechanism !== "PLAIN" && mechanism !== "SCRAM-SHA-256" && mechanism !== "SCRAM-SHA-512") {
    throw new UsageError(`--command-config ${file}: sasl.mechanism ${mechanism} is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)`);
  }
  const jaas = parseJaasConfig(props.get("sasl.jaas.config") ?? "");
  if (typeof jaas === "string") throw new UsageError(`--command-config ${file}: sasl.jaas.config: ${jaas}`);
  const username = jaas.options.get("username");
  const password = jaas.options.get("password");
  if (username === undefined || password === undefined) {
    throw new UsageError(`--command-config ${file}: sasl.jaas.config needs username="..." and password="..."`);
  }
  return { mechanism, username, password };
}

function tlsOf(file: string, props: Map<string, string>): TlsClientOptions {
  const fail = (key: string, why: string) => new UsageError(`--command-config ${file}: ${key}: ${why}`);
  const read = (key: string) => {
    const path = props.get(key)!;
    try {
      return readFileSync(path, "utf8");
    } catch (e) {
      throw fail(key, `cannot read ${path}: ${(e as Error).message}`);
    }
  };
  for (const key of ["ssl.keystore.type", "ssl.truststore.type"]) {
    const type = props.get(key);
    if (type !== undefined && type.toUpperCase() !== "PEM") throw fail(key, `${type} is not supported; PEM only`);
  }
  const tls: TlsClientOptions = {};
  const trustText = props.has("ssl.truststore.location") ? read("ssl.truststore.location") : props.get("ssl.truststore.certificates");
  if (trustText !== undefined) {
    const certs = splitPem(trustText).certificates;
    if (certs.length === 0) throw fail(props.has("ssl.truststore.location") ? "ssl.truststore.location" : "ssl.truststore.certificates", "no PEM certificate");
    tls.trustedCertificates = certs.join("");
  }
  let own: { privateKeys: string[]; certificates: string[] } | null = null;
  if (props.has("ssl.keystore.location")) own = splitPem(read("ssl.keystore.location"));
  else if (props.has("ssl.keystore.certificate.chain") || props.has("ssl.keystore.key")) {
    own = { certificates: splitPem(props.get("ssl.keystore.certificate.chain") ?? "").certificates, privateKeys: splitPem(props.get("ssl.keystore.key") ?? "").privateKeys };
  }
  if (own !== null) {
    if (own.privateKeys.length !== 1 || own.certificates.length === 0) throw fail("ssl.keystore.location", "a PEM keystore holds one private key and its certificate chain");
    tls.certificateChain = own.certificates.join("");
    tls.privateKey = own.privateKeys[0];
    const pw = props.get("ssl.key.password");
    if (pw !== undefined) tls.privateKeyPassword = pw;
  }
  const algorithm = (props.get("ssl.endpoint.identification.algorithm") ?? "https").trim().toLowerCase();
  if (algorithm !== "https" && algorithm !== "") throw fail("ssl.endpoint.identification.algorithm", `"${algorithm}" is not https or empty`);
  tls.verifyHostname = algorithm === "https";
  return tls;
}

/**
 * Buffered stdout for bytes and text: writes are gathered into chunks and handed to the runtime
 * with backpressure (a slow reader of our output slows us down instead of filling memory).
 */
export class Output {
  private chunks: Uint8Array[] = [];
  private size = 0;
  private readonly encoder = new TextEncoder();
  private pending: Promise<void> = Promise.resolve();
  static readonly chunkBytes = 256 * 1024;

  text(s: string): void {
    this.bytes(this.encoder.encode(s));
  }

  bytes(b: Uint8Array): void {
    this.chunks.push(b);
    this.size += b.length;
  }

  /** Whether enough is gathered to be worth a write. */
  get full(): boolean {
    return this.size >= Output.chunkBytes;
  }

  /** True once stdout was closed by its reader (`strand consume ... | head`): stop producing output. */
  closed = false;
  private static listening = false;

  /** Hands what is gathered to stdout; resolves once the runtime has taken it. */
  flush(): Promise<void> {
    if (!Output.listening) {
      // A reader that went away (EPIPE) is the end of the output, not an error to report.
      Output.listening = true;
      process.stdout.on("error", () => {});
    }
    if (this.closed) {
      this.chunks = [];
      this.size = 0;
    }
    if (this.size === 0) return this.pending;
    const data = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      data.set(c, at);
      at += c.length;
    }
    this.chunks = [];
    this.size = 0;
    const prev = this.pending;
    const onError = (err: Error | null | undefined, resolve: () => void, reject: (e: Error) => void) => {
      if (!err) return resolve();
      if ((err as { code?: string }).code !== "EPIPE") return reject(err);
      this.closed = true;
      resolve();
    };
    this.pending = prev.then(() => new Promise<void>((resolve, reject) => {
      if (this.closed) return resolve();
      try {
        process.stdout.write(data, (err) => onError(err, resolve, reject));
      } catch (e) {
        onError(e as Error, resolve, reject);
      }
    }));
    return this.pending;
  }
}

/**
 * Lines of stdin as bytes (without \n or \r\n), in order, as they arrive. A line's pieces wait
 * in a list until its newline comes (no copying per chunk); one longer than consoleLineBytesMax
 * ends the tool.
 */
export async function* stdinLines(): AsyncGenerator<Uint8Array> {
  let partial: Uint8Array[] = [];
  let partialBytes = 0;
  const join = (last: Uint8Array): Uint8Array => {
    if (partial.length === 0) return last;
    const out = new Uint8Array(partialBytes + last.length);
    let at = 0;
    for (const p of partial) {
      out.set(p, at);
      at += p.length;
    }
    out.set(last, at);
    partial = [];
    partialBytes = 0;
    return out;
  };
  const trimCr = (line: Uint8Array) => (line.length > 0 && line[line.length - 1] === 13 ? line.subarray(0, line.length - 1) : line);
  for await (const chunk of process.stdin as AsyncIterable<Uint8Array | string>) {
    const data = typeof chunk === "string" ? new TextEncoder().encode(chunk) : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, start)) {
      yield trimCr(join(data.subarray(start, i)));
      start = i + 1;
    }
    if (start < data.length) {
      partial.push(data.subarray(start));
      partialBytes += data.length - start;
      if (partialBytes > consoleLineBytesMax) throw new ClientError(`a line of stdin is longer than ${consoleLineBytesMax} bytes`);
    }
  }
  if (partialBytes > 0) yield trimCr(join(new Uint8Array(0)));
}

/**
 * Runs a tool: exit 0 when it returns; 2 and one line for a UsageError; 1 and one line for any
 * other failure (a ClientError's message as is, anything else named).
 */
export async function runTool(name: string, fn: () => Promise<number | void>): Promise<never> {
  let code = 0;
  try {
    code = (await fn()) ?? 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`strand ${name}: ${e.message} (see strand ${name} --help)\n`);
      code = 2;
    } else if (e instanceof ClientError) {
      process.stderr.write(`strand ${name}: ${oneLine(e.message)}\n`);
      code = 1;
    } else {
      process.stderr.write(`strand ${name}: ${(e as Error)?.name ?? "Error"}: ${oneLine(String((e as Error)?.message ?? e))}\n`);
      code = 1;
    }
  }
  process.exit(code);
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, " ");
}
