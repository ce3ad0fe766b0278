// How long one authorize() takes against an ACL set of a realistic size: 10,000 literal topic
// ACLs, 200 prefixed ones, a wildcard; for a 60-character topic name (the prefix walk's worst
// case grows with the name). Prints ns per call (best of 7 rounds) and the ratio to a cache with
// no prefixed ACLs.
// Run: bun test/bench/acl_authorize_bench.ts && deno run -A test/bench/acl_authorize_bench.ts
import { AclCache, AclOperation, AclPermissionType, PatternType, ResourceType } from "../../src/authorizer/mod.ts";

function build(prefixed: number): AclCache {
  const c = new AclCache({ superUsers: [], allowEveryoneIfNoAclFound: false });
  const entry = (p: string) => ({ principal: p, host: "*", operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW });
  for (let i = 0; i < 10_000; i++) c.set({ resourceType: ResourceType.TOPIC, name: `topic-${i}`, patternType: PatternType.LITERAL }, [entry(`User:u${i % 50}`)]);
  for (let i = 0; i < prefixed; i++) c.set({ resourceType: ResourceType.TOPIC, name: `team-${i}-`, patternType: PatternType.PREFIXED }, [entry(`User:u${i % 50}`)]);
  c.set({ resourceType: ResourceType.TOPIC, name: "*", patternType: PatternType.LITERAL }, [entry("User:ops")]);
  return c;
}

function measure(c: AclCache, name: string): number {
  const who = { principal: "User:u7", host: "10.0.0.1", listener: "PLAINTEXT" };
  const n = 100_000;
  let allowed = 0;
  for (let i = 0; i < 10_000; i++) if (c.authorize(who, AclOperation.READ, ResourceType.TOPIC, name)) allowed++;
  // The best of 7 rounds: the machine is shared, and the minimum is the least disturbed figure.
  let best = Infinity;
  for (let round = 0; round < 7; round++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) if (c.authorize(who, AclOperation.READ, ResourceType.TOPIC, name)) allowed++;
    best = Math.min(best, ((performance.now() - t0) * 1e6) / n);
  }
  if (allowed < 0) console.log(allowed);
  return best;
}

const name = "team-7-payments-events-europe-west-production-v2-partitioned"; // 60 chars
const withPrefixed = measure(build(200), name);
const literalOnly = measure(build(0), name);
const runtime = (globalThis as { Bun?: unknown }).Bun !== undefined ? "bun" : "deno";
console.log(`${runtime}: authorize, 10k literal + 200 prefixed ACLs, 60-char name: ${withPrefixed.toFixed(0)} ns/call`);
console.log(`${runtime}: authorize, 10k literal ACLs only:                      ${literalOnly.toFixed(0)} ns/call (ratio ${(withPrefixed / literalOnly).toFixed(2)})`);
