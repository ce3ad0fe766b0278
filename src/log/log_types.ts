// What Log's appends and reads answer (kept apart so log.ts stays readable in one sitting).

export interface AppendInfo {
  firstOffset: number;
  lastOffset: number;
  /** When the leader appended; -1 for a follower's append (the leader's batches keep theirs). */
  logAppendTimeMs: number;
  /** A producer's retry of a batch the log has: nothing was appended; the offsets are the original's. */
  duplicate?: true;
}

export interface ReadResult {
  records: Uint8Array;
  /** The log end offset when the read ran. */
  logEndOffset: number;
  logStartOffset: number;
}
