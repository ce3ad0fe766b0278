// BrokerTopicStats: per-topic totals of what clients produced to and fetched from this broker since
// it started (Kafka's BrokerTopicStats: MessagesInPerSec, BytesInPerSec, BytesOutPerSec), which
// /metrics reports as counters. Updated once per partition per request from figures the produce
// and fetch paths already have (the batch summary's record count, the byte lengths), never per
// record. Replica fetches are not counted in bytes out, as Kafka counts them apart. A topic's
// totals are dropped when its last local replica is deleted, as Kafka removes a deleted topic's
// metrics.

export interface TopicCounts {
  messagesIn: number;
  bytesIn: number;
  bytesOut: number;
}

export class BrokerTopicStats {
  private readonly topics = new Map<string, TopicCounts>();

  private counts(topic: string): TopicCounts {
    let c = this.topics.get(topic);
    if (c === undefined) this.topics.set(topic, (c = { messagesIn: 0, bytesIn: 0, bytesOut: 0 }));
    return c;
  }

  /** A successful append of `messages` records in `bytes` bytes of batches. */
  recordIn(topic: string, messages: number, bytes: number): void {
    const c = this.counts(topic);
    c.messagesIn += messages;
    c.bytesIn += bytes;
  }

  /** Record bytes handed to a consumer's fetch. */
  recordOut(topic: string, bytes: number): void {
    if (bytes > 0) this.counts(topic).bytesOut += bytes;
  }

  removeTopic(topic: string): void {
    this.topics.delete(topic);
  }

  /** Topics with their totals (live objects: read them, do not keep them). */
  entries(): IterableIterator<[string, Readonly<TopicCounts>]> {
    return this.topics.entries();
  }
}
