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
// Embedded registry: `<first log dir>/.strand-registry/registry.journal` (journal.ts), one
// CRC-checked record per transaction that changes persistent state, group-committed (one fsync
// per turn of the event loop) before the call returns; and `snapshot.json`, rewritten atomically
// a slice at a time (snapshot_writer.ts) when the journal has grown past its bound, the journal
// set aside meanwhile as `registry.journal.<zxid>` and a new one started:
//   {"format":"strand-registry-snapshot","version":1,"zxid":"<decimal>","nodes":[
//   {"path":"/brokers","data":"<base64>","czxid":"1","mzxid":"1","pzxid":"4","ctime":<ms>,
//    "mtime":<ms>,"version":0,"cversion":2},
//   ...]}
// One node per line, parents before children, ephemerals never written; zxids are decimal
// strings; cversion and the child count give the parent's sequence counter. A file that does not parse, or whose
// nodes lack parents, stops start-up with an error naming the file; so does a journal damaged
// anywhere but in its last record (a torn last record, never acknowledged, is dropped). A dir
// with only snapshot.json (before the journal) opens as it is.
export * from "./types.ts";
export * from "./znodes.ts";
export * from "./znodes_acl.ts";
export {
  type EmbeddedRegistryOptions,
  EmbeddedRegistryStore,
  journalFileName,
  nodeDataBytesMax,
  parentPath,
  pathProblem,
  type RegistryPlatform,
  snapshotFileName,
  validatePath,
} from "./embedded.ts";
export { toRegistryError, ZooKeeperRegistry, type ZooKeeperRegistryOptions } from "./zookeeper.ts";
