// ProducerIdManager: hands out producer ids for InitProducerId, as Kafka's ZkProducerIdManager.
// Ids come in blocks of `producerIdBlockSize` taken from /latest_producer_id_block (Kafka's JSON,
// registry/znodes.ts): read the last block handed out, write the one after it conditionally on
// the version read, and retry when another broker wrote first. The same code runs on the embedded
// registry.
//
// Invariants:
// - An id is handed out at most once, across brokers and restarts: a block is this broker's only
//   once its conditional write succeeded, and a restart takes a new block (the rest of the old
//   one is never used). A write whose answer was lost (connection loss) wastes a block, never
//   hands one out twice: the next read sees it and moves past it.
// - The next block is fetched when the current one is 90% used (Kafka's RPCProducerIdManager
//   prefetches the same way), so InitProducerId waits on the registry only when ids run out
//   faster than one round trip, or the registry is unreachable.
// - One fetch at a time; every waiter shares it.
import { isRegistryUnavailable, ProducerIdBlockZNode, type ProducerIdsBlock, type Registry, RegistryError } from "../registry/mod.ts";
import { type Logger, producerIdBlockSize, producerIdBlockWriteAttemptsMax } from "../util/mod.ts";

const int64Max = (1n << 63n) - 1n;

/** Ids could not be allocated now; retriable (InitProducerId answers COORDINATOR_LOAD_IN_PROGRESS). */
export class ProducerIdsUnavailable extends Error {
  override name = "ProducerIdsUnavailable";
}

/** Reads the last block and writes the next one for `brokerId` (Kafka's getNewProducerIdBlock). */
export async function allocateProducerIdBlock(registry: Registry, brokerId: number, blockSize = producerIdBlockSize): Promise<ProducerIdsBlock> {
  const path = ProducerIdBlockZNode.path;
  for (let attempt = 0; attempt < producerIdBlockWriteAttemptsMax; attempt++) {
    let current: { data: Uint8Array; version: number } | null;
    try {
      const { data, stat } = await registry.getData(path);
      current = { data, version: stat.version };
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NoNode")) throw e;
      current = null;
    }
    let first = 0n;
    if (current !== null && current.data.length > 0) {
      const last = ProducerIdBlockZNode.decode(current.data);
      // Restarting from 0 would hand out ids again: refuse, as Kafka fails to parse it.
      if (last === null) throw new Error(`${path} does not hold a producer id block; not allocating ids`);
      const lastId = last.firstProducerId + BigInt(last.size) - 1n;
      if (lastId > int64Max - BigInt(blockSize)) throw new Error("every producer id has been handed out");
      first = lastId + 1n;
    }
    const block: ProducerIdsBlock = { assignedBrokerId: brokerId, firstProducerId: first, size: blockSize };
    try {
      if (current === null) await registry.create(path, ProducerIdBlockZNode.encode(block));
      else await registry.setData(path, ProducerIdBlockZNode.encode(block), current.version);
      return block;
    } catch (e) {
      if (!(e instanceof RegistryError && (e.code === "BadVersion" || e.code === "NodeExists"))) throw e;
    }
  }
  throw new ProducerIdsUnavailable(`other brokers took ${producerIdBlockWriteAttemptsMax} producer id blocks in a row; try again`);
}

export class ProducerIdManager {
  /** The next id to hand out and the last of its block; next > last: none left. */
  private next = 0n;
  private last = -1n;
  private prefetched: ProducerIdsBlock | null = null;
  private fetching: Promise<void> | null = null;

  constructor(
    private readonly brokerId: number,
    private readonly registry: Registry,
    private readonly logger: Logger,
    private readonly blockSize = producerIdBlockSize,
  ) {}

  /** Starts fetching the first block, so the first InitProducerId does not wait for it. */
  startup(): void {
    this.fetch().catch(() => {});
  }

  /** A new producer id; waits for a block only when none is at hand. */
  async generateProducerId(): Promise<bigint> {
    for (;;) {
      const id = this.take();
      if (id !== null) return id;
      await this.fetch();
    }
  }

  private take(): bigint | null {
    if (this.next > this.last && this.prefetched !== null) {
      this.install(this.prefetched);
      this.prefetched = null;
    }
    if (this.next > this.last) return null;
    const id = this.next++;
    // 90% used: fetch the next block now, in the background.
    if (this.prefetched === null && this.fetching === null && this.last - id <= BigInt(Math.ceil(this.blockSize / 10))) {
      this.fetch().catch(() => {});
    }
    return id;
  }

  private install(block: ProducerIdsBlock): void {
    this.next = block.firstProducerId;
    this.last = block.firstProducerId + BigInt(block.size) - 1n;
  }

  /** Fetches one block into `prefetched` (or shares the fetch under way). */
  private fetch(): Promise<void> {
    if (this.prefetched !== null) return Promise.resolve();
    this.fetching ??= allocateProducerIdBlock(this.registry, this.brokerId, this.blockSize).then(
      (block) => {
        this.fetching = null;
        this.prefetched = block;
        this.logger.info({ first: block.firstProducerId.toString(), size: block.size }, "producer id block allocated");
      },
      (e: unknown) => {
        this.fetching = null;
        const unavailable = isRegistryUnavailable(e) || e instanceof ProducerIdsUnavailable;
        this.logger.warn({ err: e instanceof Error ? e.message : String(e) }, "could not allocate a producer id block");
        throw unavailable ? new ProducerIdsUnavailable(e instanceof Error ? e.message : String(e)) : e;
      },
    );
    return this.fetching;
  }
}
