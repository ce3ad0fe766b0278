// subjectDistinguishedName against certificates made by openssl in the test. Each expected string
// is what Java 17's X500Principal.getName() prints for the same subject (checked by hand with a
// JDK when this test was written), since Kafka's ssl.principal.mapping.rules are matched against it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { issuerDistinguishedName, splitPem, subjectDistinguishedName } from "../../src/util/x509.ts";
import { CertDir, type KeyPair, skipUnlessOpenssl } from "../helpers/certs.ts";

const skip = skipUnlessOpenssl();

let dir: CertDir | undefined;
let ca: KeyPair | undefined;
function certDir(): { dir: CertDir; ca: KeyPair } {
  if (dir === undefined) {
    dir = new CertDir();
    process.on("exit", () => dir?.cleanup());
  }
  ca ??= dir.ca("dn test CA");
  return { dir, ca };
}
function leaf(subject: string): Uint8Array {
  const c = certDir();
  return c.dir.leaf(c.ca, { subject, keyType: "ec" }).der;
}

test("x509: RDNs come out in reverse order of the certificate's, as RFC 2253 asks", { skip }, () => {
  const der = leaf("/C=GB/O=strand/OU=eng/CN=alice");
  assert.equal(subjectDistinguishedName(der), "CN=alice,OU=eng,O=strand,C=GB");
  assert.equal(issuerDistinguishedName(der), "CN=dn test CA");
});

test("x509: a multi-valued RDN joins its attributes with + in DER order", { skip }, () => {
  assert.equal(subjectDistinguishedName(leaf("/C=GB/O=strand/OU=eng+UID=u42/CN=alice")), "CN=alice,OU=eng+UID=u42,O=strand,C=GB");
  // DER sorts a SET OF by encoding, whatever order openssl was given.
  assert.equal(subjectDistinguishedName(leaf("/O=a\\+b+OU=c\\,d+CN=e\\=f/C=GB")), "C=GB,CN=e\\=f+O=a\\+b+OU=c\\,d");
});

test("x509: , = + < > # ; \" \\ are escaped anywhere, blanks at either end one by one", { skip }, () => {
  assert.equal(subjectDistinguishedName(leaf("/CN=a\\,b/O=x;y<z>\"q\"\\\\w#h")), "O=x\\;y\\<z\\>\\\"q\\\"\\\\w\\#h,CN=a\\,b");
  assert.equal(subjectDistinguishedName(leaf("/CN= #lead and trail /O=#hash")), "O=\\#hash,CN=\\ \\#lead and trail\\ ");
});

test("x509: keywords only for RFC 2253's attributes; others as OID=#hex of the DER value", { skip }, () => {
  assert.equal(
    subjectDistinguishedName(leaf("/emailAddress=alice@example.com/serialNumber=1234/CN=bob/DC=example/DC=com/L=London/ST=Greater London/street=1 Main St")),
    "STREET=1 Main St,ST=Greater London,L=London,DC=com,DC=example,CN=bob,2.5.4.5=#130431323334," +
      "1.2.840.113549.1.9.1=#1611616c696365406578616d706c652e636f6d",
  );
  assert.equal(subjectDistinguishedName(leaf("/title=Dr/GN=Al/SN=Ice/CN=x")), "CN=x,2.5.4.4=#0c03496365,2.5.4.42=#0c02416c,2.5.4.12=#0c024472");
});

test("x509: UTF-8 values print as text", { skip }, () => {
  assert.equal(subjectDistinguishedName(leaf("/CN=Zoë 名前/O=strand")), "O=strand,CN=Zoë 名前");
});

test("x509: a malformed or truncated certificate gives null, never a throw", { skip }, () => {
  const der = leaf("/CN=alice");
  assert.equal(subjectDistinguishedName(new Uint8Array(0)), null);
  assert.equal(subjectDistinguishedName(new Uint8Array([0x30, 0x84, 0xff, 0xff, 0xff, 0xff])), null);
  for (const cut of [1, 2, 10, 50, 100, 150, 200]) {
    assert.equal(subjectDistinguishedName(der.subarray(0, cut)), null, `cut at ${cut}`);
  }
  // Every single-byte corruption either still parses or gives null.
  for (let i = 0; i < der.length; i++) {
    const bad = der.slice();
    bad[i] ^= 0xff;
    const dn = subjectDistinguishedName(bad);
    assert.ok(dn === null || typeof dn === "string");
  }
  let seed = 7;
  for (let n = 0; n < 200; n++) {
    const junk = new Uint8Array(64).map(() => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff);
    junk[0] = 0x30;
    const dn = subjectDistinguishedName(junk);
    assert.ok(dn === null || typeof dn === "string");
  }
});

test("x509: splitPem takes a PEM keystore apart into its key and its certificate chain", { skip }, () => {
  const c = certDir();
  const pair = c.dir.leaf(c.ca, { subject: "/CN=broker", keyFormat: "encrypted", password: "pw" });
  const keystore = `Bag Attributes\n    friendlyName: broker\n${pair.key}${pair.cert}${c.ca.cert}`;
  const parts = splitPem(keystore);
  assert.equal(parts.privateKeys.length, 1);
  assert.match(parts.privateKeys[0], /^-----BEGIN ENCRYPTED PRIVATE KEY-----\n[\s\S]+-----END ENCRYPTED PRIVATE KEY-----\n$/);
  assert.deepEqual(parts.certificates, [pair.cert, c.ca.cert]);
  assert.deepEqual(splitPem("no pem here"), { privateKeys: [], certificates: [] });
  assert.deepEqual(splitPem("-----BEGIN CERTIFICATE-----\nabc\n-----END PRIVATE KEY-----\n"), { privateKeys: [], certificates: [] });
});
