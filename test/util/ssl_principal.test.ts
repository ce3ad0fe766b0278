// ssl.principal.mapping.rules as Kafka's SslPrincipalMapper parses and applies them: rule lists
// (commas inside patterns, blanks, empty rules), RULE with L/U, Java's replacement syntax with
// Kafka's handling of absent groups, refusals, and the whole path from a certificate made by
// openssl to a principal name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SslPrincipalMapper } from "../../src/util/ssl_principal.ts";
import { subjectDistinguishedName } from "../../src/util/x509.ts";
import { CertDir, skipUnlessOpenssl } from "../helpers/certs.ts";

const rules = (text: string | undefined) => SslPrincipalMapper.fromRules(text);
const parsed = (text: string) => rules(text).toString();

test("principal: unset or DEFAULT gives the distinguished name itself", () => {
  assert.equal(rules(undefined).name("CN=alice,O=strand"), "CN=alice,O=strand");
  assert.equal(rules("DEFAULT").name("CN=alice,O=strand"), "CN=alice,O=strand");
});

test("principal: the first rule whose pattern matches the whole name wins, then L or U", () => {
  const m = rules([
    "RULE:^CN=(.*?),OU=Services.*$/$1/L",
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),C=(.*?)$/$1@$2/",
    "RULE:^uid=(.*?),dc=(.*?),dc=(.*?)$/$1.$2/U",
    "DEFAULT",
  ].join(", "));
  assert.equal(m.name("CN=Kafka-Connect,OU=Services,O=strand,C=GB"), "kafka-connect");
  assert.equal(m.name("CN=alice,OU=eng,O=strand,C=GB"), "alice@eng");
  assert.equal(m.name("uid=bob,dc=example,dc=org"), "BOB.EXAMPLE");
  // A pattern that matches only part of the name does not apply.
  assert.equal(m.name("XCN=alice,OU=eng,O=strand,C=GB,extra=1"), "XCN=alice,OU=eng,O=strand,C=GB,extra=1");
});

test("principal: no rule applying gives null (Kafka fails the authentication)", () => {
  const m = rules("RULE:^CN=([a-z]+)$/$1/");
  assert.equal(m.name("CN=alice"), "alice");
  assert.equal(m.name("CN=Alice,O=x"), null);
  assert.equal(rules("").name("CN=alice"), null, "an empty list has no rule");
});

test("principal: rule lists split as Kafka splits them", () => {
  assert.equal(parsed(""), "SslPrincipalMapper(rules = [])");
  assert.equal(parsed(" , ,, "), "SslPrincipalMapper(rules = [])");
  assert.equal(parsed("RULE://,DEFAULT"), "SslPrincipalMapper(rules = [RULE:/, DEFAULT])");
  assert.equal(parsed("  RULE:a/b/U   ,, DEFAULT ,"), "SslPrincipalMapper(rules = [RULE:a/b/U, DEFAULT])");
  // Blanks inside a rule are kept; commas before the third "/" belong to the pattern.
  // (Kafka prints a rule without its last "/" when it has no L or U.)
  assert.equal(parsed("RULE:  x, y / z /,DEFAULT"), "SslPrincipalMapper(rules = [RULE:  x, y / z , DEFAULT])");
  assert.equal(parsed("RULE:^CN=(.*?),OU=(.*?)$/$1/L,DEFAULT"), "SslPrincipalMapper(rules = [RULE:^CN=(.*?),OU=(.*?)$/$1/L, DEFAULT])");
  // A backslash hides a "/" from the splitter.
  assert.equal(parsed("RULE:a\\/b/c\\/d/"), "SslPrincipalMapper(rules = [RULE:a\\/b/c\\/d])");
  assert.equal(rules("RULE:^a\\/(b)$/\\/$1\\//").name("a/b"), "/b/");
});

test("principal: malformed rules are refused", () => {
  for (const bad of ["default", "DEFAUL", "DEFAULT/L", "RULE:^CN=(.*)$/$1", "rule:^CN=(.*)$/$1/", "RULE:^CN=(.*)$/$1/L/U",
    "RULE:^CN=(.*)$/$1/LU", "RULE:^CN=(.*)$/L", "RULE:^CN=((.*)$/$1/", "RULE:^CN=(.*)$/$/", "RULE:^CN=.*$/$1/"]) {
    assert.throws(() => rules(bad), /ssl\.principal\.mapping\.rules/, bad);
  }
});

test("principal: Java's replacement syntax, absent groups kept as text as Kafka does", () => {
  const dn = "CN=bob,O=x";
  assert.equal(rules("RULE:^CN=([a-z]+),.*$/$12/").name(dn), "bob2", "$12 with one group is $1 then 2");
  assert.equal(rules("RULE:^CN=([a-z]+),.*$/$2-$1/").name(dn), "$2-bob", "a group the pattern lacks is text");
  assert.equal(rules("RULE:^CN=([a-z]+),.*$/\\$1=$1/").name(dn), "$1=bob", "\\$ is a dollar");
  assert.equal(rules("RULE:^CN=([a-z]+),.*$/[$0]/").name(dn), "[CN=bob,O=x]", "$0 is the whole match");
  assert.equal(rules("RULE:^CN=(?<user>[a-z]+),.*$/${user}/U").name(dn), "BOB", "named groups");
  // Every match is replaced (Java's replaceAll), including the empty one at the end of ".*".
  assert.equal(rules("RULE:.*/x/").name(dn), "xx");
  // A comma escaped in the name (RFC 2253) can be matched and kept.
  assert.equal(rules("RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT").name("CN=Doe\\, Jane,OU=ops"), "Doe\\, Jane");
});

test("principal: from an openssl certificate's DER to the principal name", { skip: skipUnlessOpenssl() }, () => {
  const dir = new CertDir();
  try {
    const ca = dir.ca("principal CA");
    const der = dir.leaf(ca, { subject: "/C=GB/O=strand/OU=Services/CN=Mirror-Maker", keyType: "ec" }).der;
    const dn = subjectDistinguishedName(der);
    assert.equal(dn, "CN=Mirror-Maker,OU=Services,O=strand,C=GB");
    assert.equal(rules("RULE:^CN=(.*?),OU=Services,.*$/$1/L,DEFAULT").name(dn!), "mirror-maker");
    assert.equal(rules(undefined).name(dn!), "CN=Mirror-Maker,OU=Services,O=strand,C=GB");
  } finally {
    dir.cleanup();
  }
});
