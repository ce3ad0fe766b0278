// inter.broker.protocol.version: the protocol a broker speaks to the others, which an operator
// raises only once every broker of the cluster runs the new release (Kafka's rolling upgrade).
// strand reads it for one choice, as Kafka does: from 2.7 (KIP-497) a partition leader proposes
// ISR changes to the controller with AlterPartition (56); below, it writes the state znode itself
// and announces the change under /isr_change_notification, which a controller of either kind
// reads, so a cluster in the middle of an upgrade keeps working. Values as Kafka spells them:
// "2.6", "2.7-IV2", "3.8-IV0", "0.10.2"; the default is Kafka 3.8's newest, "3.8-IV0".

export const INTER_BROKER_PROTOCOL_DEFAULT = "3.8-IV0";
/** The first version whose leaders send AlterPartition (Kafka's IBP_2_7_IV2 sends AlterIsr). */
const ALTER_PARTITION_FROM: [number, number] = [2, 7];
/** The newest release strand speaks for (Kafka 3.8). */
const NEWEST: [number, number] = [3, 8];

/** [major, minor] of a version Kafka would accept, or null. */
function parse(v: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)(?:\.\d+)?(?:-IV\d+)?$/.exec(v.trim());
  if (m === null) return null;
  const mm: [number, number] = [Number(m[1]), Number(m[2])];
  if (mm[0] === 0 ? mm[1] < 8 || mm[1] > 11 : mm[0] > NEWEST[0] || (mm[0] === NEWEST[0] && mm[1] > NEWEST[1]) || mm[0] < 1) return null;
  return mm;
}

/** Why the value is not a version Kafka 3.8 knows, or null. */
export function interBrokerProtocolVersionError(v: string): string | null {
  return parse(v) === null ? `${v} is not a Kafka release this broker speaks (0.8.0 to ${NEWEST.join(".")}, e.g. 2.6 or 3.8-IV0)` : null;
}

/** True when leaders at this version propose ISR changes with AlterPartition. */
export function usesAlterPartition(v: string): boolean {
  const mm = parse(v);
  if (mm === null) return true;
  return mm[0] > ALTER_PARTITION_FROM[0] || (mm[0] === ALTER_PARTITION_FROM[0] && mm[1] >= ALTER_PARTITION_FROM[1]);
}
