// writeSnapshotGradually: the embedded registry's snapshot rewrite, a slice at a time, while the
// tree goes on changing. For 10,000 partitions the tree holds some 30,000 nodes and the snapshot
// megabytes: encoded and written in one piece it held the event loop for a quarter of a second.
//
// The snapshot is fuzzy, as ZooKeeper's are: it is headed by the zxid at which it began (every
// journal record up to it was set aside before, journal.ts), and each node is written as it is
// when its turn comes, so a node changed since may be written in a later state. Replaying the
// journal records after that zxid on top of it (each record holds the whole state after its
// transaction of every node it touched, and replaying is idempotent) gives the tree exactly.
// The nodes are taken in the tree's order at the start (parents before children); one deleted
// meanwhile is left out (its deletion is in the journal), one created meanwhile too (so is its
// creation). The file appears whole or not at all: written to `<path>.tmp`, fsynced, renamed,
// and the dir fsynced, each off the event loop.

import { syncDirAsync } from "../log/mod.ts";
import type { FileSystem } from "../platform/mod.ts";
import { registrySnapshotChunkChars, type TimeSlice, utf8Bytes } from "../util/mod.ts";
import { snapshotEntry, snapshotHead, type ZNode } from "./snapshot.ts";

/** Writes the snapshot of nodes (persistent ones) headed by zxid to path; returns its size in bytes. */
export async function writeSnapshotGradually(
  fs: FileSystem,
  path: string,
  nodes: ReadonlyMap<string, ZNode>,
  zxid: bigint,
  slice: TimeSlice,
): Promise<number> {
  const paths = [...nodes.keys()];
  const tmp = `${path}.tmp`;
  const file = await fs.openAsync(tmp, "readwrite");
  let size = 0;
  try {
    file.truncate(0);
    // The text is encoded and written a chunk at a time: joined and encoded whole, megabytes
    // took tens of ms in one piece.
    let text = `${snapshotHead(zxid)}\n`;
    let first = true;
    const write = () => {
      const bytes = utf8Bytes(text);
      file.writeAt(bytes, size);
      size += bytes.length;
      text = "";
    };
    for (const nodePath of paths) {
      const node = nodes.get(nodePath);
      if (node !== undefined && node.ephemeralOwner === 0n) {
        text += `${first ? "" : ",\n"}${JSON.stringify(snapshotEntry(nodePath, node))}`;
        first = false;
      }
      if (text.length >= registrySnapshotChunkChars) write();
      if (slice.due) {
        write();
        await slice.yield();
      }
    }
    text += "\n]}\n";
    write();
    await (file.syncAsync?.() ?? file.sync());
  } finally {
    file.close();
  }
  await fs.renameAsync(tmp, path);
  await syncDirAsync(fs, path.slice(0, path.lastIndexOf("/")) || "/");
  return size;
}
