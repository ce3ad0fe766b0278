// registry: a tree of znodes with ZooKeeper's semantics, behind one contract (types.ts) with two
// backends: the embedded store here (single node, persisted under the first log dir) and the
// ZooKeeper client in zk/ (clusters). znodes.ts holds every path and payload of Kafka's layout.
//
// Invariants:
// - Both backends pass the same contract tests (test/registry/contract.ts): versions, child
//   versions, sequential suffixes (10 digits, counting the parent's child creations), ephemerals owned by a
//   session and gone when it closes, one-shot watches delivered after the change and in order,
//   multi applied whole or not at all, ZooKeeper's path rules (BadArguments otherwise).
// - Paths are absolute and chroot-free; the ZooKeeper backend (zookeeper.ts, over zk/) applies
//   the chroot, creating it when missing.
// - A ZooKeeper session can expire and be replaced; onNewSession tells the owners of ephemerals
//   to re-create them (embedded sessions never expire).
// - Payloads are Kafka's JSON, byte for byte in field names and versions; decoders return null
//   on foreign or malformed content instead of throwing.
//
// Embedded snapshot: `<first log dir>/.strand-registry/snapshot.json`, rewritten atomically
// (writeFileAtomic) by every transaction that changes persistent state, before it returns:
//   {"format":"strand-registry-snapshot","version":1,"zxid":"<decimal>","nodes":[
//   {"path":"/brokers","data":"<base64>","czxid":"1","mzxid":"1","pzxid":"4","ctime":<ms>,
//    "mtime":<ms>,"version":0,"cversion":2},
//   ...]}
// One node per line, parents before children, ephemerals never written; zxids are decimal
// strings; cversion and the child count give the parent's sequence counter. A file that does not parse, or whose
// nodes lack parents, stops start-up with an error naming the file.
export * from "./types.ts";
export * from "./znodes.ts";
export {
  type EmbeddedRegistryOptions,
  EmbeddedRegistryStore,
  nodeDataBytesMax,
  parentPath,
  pathProblem,
  type RegistryPlatform,
  snapshotFileName,
  validatePath,
} from "./embedded.ts";
export { toRegistryError, ZooKeeperRegistry, type ZooKeeperRegistryOptions } from "./zookeeper.ts";
