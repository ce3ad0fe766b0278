// Java's String.hashCode and Kafka's group placement (Utils.abs(groupId.hashCode) %
// offsets.topic.num.partitions), against values printed by a real JVM (OpenJDK 17) with:
//
//   int h = s.hashCode();
//   int abs = (h == Integer.MIN_VALUE) ? 0 : Math.abs(h);   // org.apache.kafka.common.utils.Utils.abs
//   System.out.println(h + " " + abs % 50 + " " + abs % 7 + " " + abs % 10000);
//
// The rows with negative hashes are the ones that tell Utils.abs from Utils.toPositive
// (n & 0x7fffffff); the three MIN_VALUE strings check the special case; "Aa"/"BB" collide in Java
// too; the non-ASCII ones check that the hash runs over UTF-16 code units (the emoji is a
// surrogate pair, two units).
import { test } from "node:test";
import assert from "node:assert/strict";
import { partitionForGroup } from "../../src/coordinator/group_partition.ts";
import { javaStringHashCode, kafkaAbs } from "../../src/util/java_hash.ts";

const JVM: [string, number, number, number, number][] = [
  // group id, hashCode, % 50, % 7, % 10000
  ["", 0, 0, 0, 0],
  ["a", 97, 47, 6, 97],
  ["my-group", -1906497762, 12, 1, 7762],
  ["console-consumer-12345", 158455506, 6, 6, 5506],
  ["strand", -891993594, 44, 2, 3594],
  ["test-group", 627841412, 12, 2, 1412],
  ["polygenelubricants", -2147483648, 0, 0, 0],
  ["GydZG_", -2147483648, 0, 0, 0],
  ["DESIGNING WORKHOUSES", -2147483648, 0, 0, 0],
  ["Aa", 2112, 12, 5, 2112],
  ["BB", 2112, 12, 5, 2112],
  ["gr\u00fcppe", -1233264812, 12, 3, 4812],
  ["\u65e5\u672c\u8a9e\u30b0\u30eb\u30fc\u30d7", -305235731, 31, 3, 5731],
  ["emoji-\ud83d\ude00-group", -1581567172, 22, 3, 7172],
  ["connect-cluster", 1440343063, 13, 5, 3063],
  ["group-1", 293427299, 49, 4, 7299],
  ["group-2", 293427300, 0, 5, 7300],
  ["group-10", 506311725, 25, 3, 1725],
  ["z".repeat(88), -1853489408, 8, 1, 9408],
];

test("javaStringHashCode matches java.lang.String.hashCode", () => {
  for (const [s, h] of JVM) assert.equal(javaStringHashCode(s), h, JSON.stringify(s));
});

test("partitionForGroup matches Kafka's Utils.abs(hashCode) % partitions", () => {
  for (const [s, , p50, p7, p10000] of JVM) {
    assert.equal(partitionForGroup(s, 50), p50, `${JSON.stringify(s)} % 50`);
    assert.equal(partitionForGroup(s, 7), p7, `${JSON.stringify(s)} % 7`);
    assert.equal(partitionForGroup(s, 10000), p10000, `${JSON.stringify(s)} % 10000`);
    assert.equal(partitionForGroup(s, 1), 0);
  }
});

test("kafkaAbs: Math.abs with Integer.MIN_VALUE mapped to 0", () => {
  assert.equal(kafkaAbs(0), 0);
  assert.equal(kafkaAbs(5), 5);
  assert.equal(kafkaAbs(-5), 5);
  assert.equal(kafkaAbs(2147483647), 2147483647);
  assert.equal(kafkaAbs(-2147483647), 2147483647);
  assert.equal(kafkaAbs(-2147483648), 0);
});

test("partitionForGroup is always in range, and the hash stays an int32", () => {
  let seed = 7;
  for (let i = 0; i < 2000; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) | 0;
    const len = (seed >>> 8) % 40;
    let s = "";
    for (let j = 0; j < len; j++) {
      seed = (Math.imul(seed, 1103515245) + 12345) | 0;
      s += String.fromCharCode((seed >>> 4) & 0xffff);
    }
    const h = javaStringHashCode(s);
    assert.ok(Number.isInteger(h) && h >= -2147483648 && h <= 2147483647);
    for (const n of [1, 3, 50, 10000]) {
      const p = partitionForGroup(s, n);
      assert.ok(Number.isInteger(p) && p >= 0 && p < n, `${p} in [0, ${n})`);
    }
  }
});
