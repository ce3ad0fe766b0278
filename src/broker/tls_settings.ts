// A TLS listener's settings made concrete: the PEM files its configuration names (ssl_config.ts)
// read into the platform's TLS options, for its server side and for the broker's own connections
// to other brokers on it; and the watcher that reloads them when the files change.
//
// Files are read when the broker starts (an unreadable or malformed one stops start-up with an
// error naming its key), then polled every sslFileCheckIntervalMs: a changed modification time
// or size reloads the listener's certificates without a restart (Kafka needs an AlterConfigs
// call). A bad new file is logged at warn and the settings in force stay.
import type { FileSystem, Listener, Platform, TlsClientOptions, TlsServerOptions, Timer } from "../platform/mod.ts";
import { type Logger, splitPem, sslFileCheckIntervalMs } from "../util/mod.ts";
import { ConfigError } from "./config.ts";
import type { ListenerSsl, PemSource } from "./ssl_config.ts";

export interface LoadedTls {
  server: TlsServerOptions;
  /** For the broker's own connections to this listener (inter-broker). */
  client: TlsClientOptions;
}

function readPem(fs: FileSystem, key: string, file: string): string {
  let bytes: Uint8Array | null;
  try {
    bytes = fs.readFile(file);
  } catch (e) {
    throw new ConfigError(key, `cannot read ${file}: ${(e as Error).message}`);
  }
  if (bytes === null) throw new ConfigError(key, `${file} does not exist`);
  return new TextDecoder().decode(bytes);
}

function trusted(fs: FileSystem, source: PemSource): string {
  const text = "file" in source ? readPem(fs, source.key, source.file) : source.inline;
  const certs = splitPem(text).certificates;
  if (certs.length === 0) throw new ConfigError(source.key, `no PEM certificate ("-----BEGIN CERTIFICATE-----") in ${"file" in source ? source.file : "the value"}`);
  return certs.join("");
}

/** Reads a listener's PEM files into TLS options; throws ConfigError naming the key at fault. */
export function loadListenerTls(fs: FileSystem, ssl: ListenerSsl): LoadedTls {
  const ks = ssl.keystore;
  let chain: string;
  let privateKey: string;
  if ("file" in ks) {
    const parts = splitPem(readPem(fs, ks.key, ks.file));
    if (parts.privateKeys.length !== 1 || parts.certificates.length === 0) {
      throw new ConfigError(
        ks.key,
        `${ks.file} holds ${parts.privateKeys.length} private keys and ${parts.certificates.length} certificates; a PEM keystore holds one key and its certificate chain (JKS and PKCS12 are not read)`,
      );
    }
    chain = parts.certificates.join("");
    privateKey = parts.privateKeys[0];
  } else {
    const certs = splitPem(ks.chain).certificates;
    const keys = splitPem(ks.privateKey).privateKeys;
    if (certs.length === 0) throw new ConfigError(ks.key, "no PEM certificate in the value");
    if (keys.length !== 1) throw new ConfigError(ks.key.replace("certificate.chain", "key"), "the value holds no PEM private key");
    chain = certs.join("");
    privateKey = keys[0];
  }
  const trustedCertificates = ssl.truststore === null ? undefined : trusted(fs, ssl.truststore);
  const common = {
    protocols: ssl.protocols,
    ...(ssl.cipherSuites === undefined ? {} : { cipherSuites: ssl.cipherSuites }),
    ...(trustedCertificates === undefined ? {} : { trustedCertificates }),
  };
  const own = { certificateChain: chain, privateKey, ...(ssl.keyPassword === undefined ? {} : { privateKeyPassword: ssl.keyPassword }) };
  return {
    server: { ...common, ...own, clientAuth: ssl.clientAuth },
    // A broker presents its own certificate where its peers ask for one (ssl.client.auth).
    client: { ...common, ...(ssl.clientAuth === "none" ? {} : own), verifyHostname: ssl.verifyHostname },
  };
}

/**
 * The platform refused a listener's TLS options ("TLS privateKey cannot be read: ..."): the
 * configuration's error, naming the key to fix.
 */
export function tlsSettingsError(ssl: ListenerSsl, listener: string, e: Error): ConfigError {
  const m = e.message;
  const key = /privateKeyPassword/.test(m)
    ? "ssl.key.password"
    : /cipher suite/i.test(m)
    ? "ssl.cipher.suites"
    : /protocol/i.test(m)
    ? "ssl.enabled.protocols"
    : ssl.keystore.key;
  return new ConfigError(key, `listener ${listener}: ${m.replace(/privateKeyPassword/g, "ssl.key.password")}`);
}

/** The files a listener's TLS settings come from (keystore, truststore), for the watcher. */
export function tlsFiles(ssl: ListenerSsl): string[] {
  const files: string[] = [];
  if ("file" in ssl.keystore) files.push(ssl.keystore.file);
  if (ssl.truststore !== null && "file" in ssl.truststore) files.push(ssl.truststore.file);
  return files;
}

/**
 * Polls a TLS listener's files and hands new settings to listener.setTls (and to onClient, for
 * the broker's own connections) when one changed. One per listener with file-based settings.
 */
export class TlsFileWatcher {
  private readonly seen = new Map<string, string>();
  private timer: Timer | null = null;

  constructor(
    private readonly platform: Platform,
    private readonly name: string,
    private readonly ssl: ListenerSsl,
    private readonly listener: Listener,
    private readonly logger: Logger,
    private readonly onClient: (client: TlsClientOptions) => void = () => {},
  ) {
    for (const f of tlsFiles(ssl)) this.seen.set(f, this.stamp(f));
  }

  private stamp(file: string): string {
    const st = this.platform.fs.stat(file);
    return st === null ? "missing" : `${st.mtimeMs}:${st.size}`;
  }

  start(intervalMs = sslFileCheckIntervalMs): void {
    if (this.seen.size === 0) return;
    this.timer = this.platform.clock.setInterval(() => this.check(), intervalMs);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  /** Reloads when a file changed since the last look; returns whether new settings took effect. */
  check(): boolean {
    let changed = false;
    for (const [f, was] of this.seen) {
      const now = this.stamp(f);
      if (now !== was) changed = true;
      this.seen.set(f, now);
    }
    if (!changed) return false;
    let loaded: LoadedTls;
    try {
      loaded = loadListenerTls(this.platform.fs, this.ssl);
      this.listener.setTls(loaded.server);
    } catch (e) {
      // A half-written file is read again at its next change; what is in force stays.
      this.logger.warn({ listener: this.name, err: (e as Error).message }, "TLS certificates not reloaded: the new files cannot be used; the old settings stay");
      return false;
    }
    this.onClient(loaded.client);
    this.logger.info({ listener: this.name, files: [...this.seen.keys()] }, "TLS certificates reloaded");
    return true;
  }
}
