// Certificates for TLS tests, made by Debian's `openssl` in a temp dir: a CA, and leaf
// certificates it signs, with the key forms Kafka's PEM keystores hold. Leaf certificates are
// X.509 v3 (an -extfile): Deno's rustls refuses v1 client certificates.
// A missing openssl skips the test (naming the package); under CI=true it fails instead.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export function skipUnlessOpenssl(): string | false {
  if (spawnSync("openssl", ["version"], { stdio: "ignore" }).status === 0) return false;
  const why = "needs openssl (Debian package openssl)";
  if (process.env.CI === "true") throw new Error(`CI=true and ${why} is missing: .ci/run must install it`);
  return why;
}

export interface KeyPair {
  /** PEM certificate. */
  cert: string;
  /** PEM private key in the form asked for. */
  key: string;
  /** The certificate as DER. */
  der: Uint8Array;
  certPath: string;
  keyPath: string;
}

export interface LeafOptions {
  /** openssl -subj syntax: "/C=GB/O=strand/CN=alice"; "+" joins a multi-valued RDN. */
  subject: string;
  keyType?: "rsa" | "ec";
  /** pkcs8 (default), pkcs1 (RSA PRIVATE KEY), sec1 (EC PRIVATE KEY), encrypted (PKCS#8 with password). */
  keyFormat?: "pkcs8" | "pkcs1" | "sec1" | "encrypted";
  password?: string;
  /** subjectAltName value; default DNS:localhost,IP:127.0.0.1. */
  san?: string;
}

/** A temp dir of certificates, removed by cleanup(). */
export class CertDir {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "strand-certs-"));
  private n = 0;

  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  ca(cn: string): KeyPair {
    const name = this.next("ca");
    openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.pem`, "-days", "2",
      "-subj", `/CN=${cn}`, "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], this.dir);
    return this.pair(name);
  }

  leaf(ca: KeyPair, o: LeafOptions): KeyPair {
    const name = this.next("leaf");
    const keyType = o.keyType ?? "rsa";
    const newKey = keyType === "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
    openssl(["req", ...newKey, "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-utf8", "-multivalue-rdn", "-subj", o.subject], this.dir);
    fs.writeFileSync(path.join(this.dir, `${name}.ext`),
      `subjectAltName=${o.san ?? "DNS:localhost,IP:127.0.0.1"}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n`);
    openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", ca.certPath, "-CAkey", ca.keyPath, "-CAcreateserial", "-out", `${name}.pem`,
      "-days", "2", "-extfile", `${name}.ext`], this.dir);
    switch (o.keyFormat ?? "pkcs8") {
      case "pkcs1":
      case "sec1":
        openssl(["pkey", "-in", `${name}.key`, "-traditional", "-out", `${name}.key2`], this.dir);
        fs.renameSync(path.join(this.dir, `${name}.key2`), path.join(this.dir, `${name}.key`));
        break;
      case "encrypted":
        openssl(["pkey", "-in", `${name}.key`, "-aes256", "-passout", `pass:${o.password ?? "secret"}`, "-out", `${name}.key2`], this.dir);
        fs.renameSync(path.join(this.dir, `${name}.key2`), path.join(this.dir, `${name}.key`));
        break;
    }
    return this.pair(name);
  }

  private next(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  private pair(name: string): KeyPair {
    const certPath = path.join(this.dir, `${name}.pem`);
    const keyPath = path.join(this.dir, `${name}.key`);
    openssl(["x509", "-in", `${name}.pem`, "-outform", "DER", "-out", `${name}.der`], this.dir);
    return {
      cert: fs.readFileSync(certPath, "utf8"),
      key: fs.readFileSync(keyPath, "utf8"),
      der: new Uint8Array(fs.readFileSync(path.join(this.dir, `${name}.der`))),
      certPath,
      keyPath,
    };
  }
}

function openssl(args: string[], cwd: string): void {
  const r = spawnSync("openssl", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr}`);
}
