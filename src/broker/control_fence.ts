// ControlFence: whether a LeaderAndIsr, StopReplica or UpdateMetadata that came over the network
// is from the cluster's current controller and meant for this broker's current registration.
// Checked on every such request, with or without an authorizer, after the listener/ACL gate
// (inter_broker.ts). Kafka trusts any controller epoch at or above the newest it saw, so one
// request with epoch 2^31-1 made a broker refuse its real controller until restarted; strand
// takes the registry's word instead:
//
// - Controller: (controller id, controller epoch) must be what /controller and /controller_epoch
//   hold. An epoch below the newest this broker obeyed is stale without a read; the pair last
//   confirmed passes without one; any other pair is read from the registry (after a ZooKeeper
//   sync when the first read disagrees, since this session's server may lag the one the new
//   controller wrote through), so a forged epoch above the real one is refused and never adopted.
//   A request naming this broker as the controller is refused: this broker's own controller
//   reaches it in process (local_channel.ts), never over the network. Refusal:
//   STALE_CONTROLLER_EPOCH, whether the epoch is older or unknown (one code for both, so a
//   guesser learns nothing of the direction).
// - Broker epoch: must equal this broker's registration (the czxid of /brokers/ids/<id>). Kafka
//   lets -1 (unknown) and any newer value pass; strand refuses -1 and so every request version
//   without the field (LeaderAndIsr v0-1, StopReplica v0, UpdateMetadata v0-4: a controller that
//   cannot name this registration cannot be told from anyone else; strand's controller sends
//   v6/v3/v7). A newer value is what Kafka's rule is for: the controller saw this broker's
//   re-registration before the broker learnt its own czxid; it passes only when the registry
//   shows this session's registration with exactly that czxid. Refusal: STALE_BROKER_EPOCH.
//
// A refusal is logged at warn, the first at once and then one line per refusalLogIntervalMs at
// most with the count unsaid (refusal_log.ts): forged requests on the inter-broker listener must
// not flood the log.
//
// Reads happen before the request is applied; the local channel checks the controller epoch
// again, synchronously, when it applies the request (local_channel.ts), so nothing read here is
// acted on after a newer controller spoke. A registry that cannot be read closes the connection
// (the controller's channel reconnects and sends the request again) instead of refusing it.
import { BrokerIdZNode, ControllerEpochZNode, ControllerZNode, type Registry, RegistryError } from "../registry/mod.ts";
import { ErrorCode, type Logger } from "../util/mod.ts";
import type { BrokerEndpoint } from "./metadata_cache.ts";
import { logRefusal } from "./refusal_log.ts";
import { CloseConnection } from "./services.ts";

/** What a control request says of its sender and its target. */
export interface ControlRequestIds {
  controllerId: number;
  controllerEpoch: number;
  brokerEpoch: bigint;
}

export class ControlFence {
  /** The controller (id and epoch) last confirmed against the registry. */
  private confirmed: { controllerId: number; controllerEpoch: number } | null = null;

  constructor(
    private readonly registry: Registry,
    private readonly brokerId: number,
    /** This broker's registration's czxid, as it learnt it when registering (-1 before). */
    private readonly brokerEpoch: () => bigint,
    /** The newest controller epoch this broker obeyed (the local channel's). */
    private readonly controllerEpochSeen: () => number,
    /** The platform clock's monotonic ms, for spacing refusal lines. */
    private readonly monotonicMs: () => number,
  ) {}

  /**
   * NONE, or the error the whole request is answered with (logged at warn with `api` and why,
   * rate-limited).
   * Rejects with CloseConnection when the registry cannot be read.
   */
  async check(api: string, r: ControlRequestIds, logger: Logger, fields: Record<string, unknown>): Promise<number> {
    let reason: string | null;
    try {
      reason = await this.brokerEpochRefusal(r.brokerEpoch);
      if (reason !== null) {
        const why = reason;
        logRefusal(logger, "control-fence", this.monotonicMs(), String(fields.remote ?? "unknown"), (notSaid) => {
          logger.warn({ api, ...fields, currentBrokerEpoch: String(this.brokerEpoch()), reason: why, ...notSaid }, `${api} refused: stale broker epoch`);
        });
        return ErrorCode.STALE_BROKER_EPOCH;
      }
      reason = await this.controllerRefusal(r.controllerId, r.controllerEpoch);
    } catch (e) {
      if (!(e instanceof RegistryError)) throw e;
      throw new CloseConnection(`${api}: the registry could not be read to check the request's epochs (${e.message})`);
    }
    if (reason !== null) {
      const why = reason;
      logRefusal(logger, "control-fence", this.monotonicMs(), String(fields.remote ?? "unknown"), (notSaid) => {
        logger.warn({ api, ...fields, reason: why, ...notSaid }, `${api} refused: not from the current controller`);
      });
      return ErrorCode.STALE_CONTROLLER_EPOCH;
    }
    return ErrorCode.NONE;
  }

  /** Why `requested` is not this broker's registration, or null when it is. */
  async brokerEpochRefusal(requested: bigint): Promise<string | null> {
    const current = this.brokerEpoch();
    if (requested === current && current >= 0n) return null;
    if (requested < 0n) return "the request carries no broker epoch (-1, or a version without the field)";
    if (requested < current) return `broker epoch ${requested} is an older registration than ${current}`;
    // Read by this broker's own session, which created the node: it sees its own create.
    const stat = await this.registry.exists(BrokerIdZNode.path(this.brokerId));
    if (stat !== null && stat.ephemeralOwner === this.registry.sessionId && stat.czxid === requested) return null;
    return `broker epoch ${requested} is not this broker's registration (${stat === null ? "not registered" : `czxid ${stat.czxid}`})`;
  }

  /** Why (controllerId, controllerEpoch) is not the registry's controller, or null when it is. */
  async controllerRefusal(controllerId: number, controllerEpoch: number): Promise<string | null> {
    if (controllerId === this.brokerId) return `controller ${controllerId} is this broker, whose controller never sends over the network`;
    const seen = this.controllerEpochSeen();
    if (controllerEpoch < seen) return `controller epoch ${controllerEpoch} is older than ${seen}`;
    const c = this.confirmed;
    if (c !== null && c.controllerId === controllerId && c.controllerEpoch === controllerEpoch) return null;
    const matches = (x: { id: number | null; epoch: number | null }) => x.id === controllerId && x.epoch === controllerEpoch;
    let reg = await this.readController();
    if (!matches(reg) && this.registry.sync !== undefined) {
      await this.registry.sync(ControllerEpochZNode.path);
      reg = await this.readController();
    }
    if (!matches(reg)) {
      return `controller ${controllerId} with epoch ${controllerEpoch} is not the registry's (/controller ${reg.id ?? "none"}, /controller_epoch ${reg.epoch ?? "none"})`;
    }
    if (this.confirmed === null || controllerEpoch >= this.confirmed.controllerEpoch) this.confirmed = { controllerId, controllerEpoch };
    return null;
  }

  private async readController(): Promise<{ id: number | null; epoch: number | null }> {
    const epoch = await dataOrNull(this.registry, ControllerEpochZNode.path);
    const controller = await dataOrNull(this.registry, ControllerZNode.path);
    return {
      id: controller === null ? null : ControllerZNode.decode(controller),
      epoch: epoch === null ? null : ControllerEpochZNode.decode(epoch),
    };
  }
}

/**
 * Where broker `id` is registered (/brokers/ids/<id>), on `listener` (else its first endpoint, as
 * the controller picks); null when it is not registered (not live) or its registration is
 * unreadable. Followers reach a leader the metadata does not know yet only through this.
 */
export async function registeredBroker(registry: Registry, id: number, listener: string): Promise<BrokerEndpoint | null> {
  const data = await dataOrNull(registry, BrokerIdZNode.path(id));
  const info = data === null ? null : BrokerIdZNode.decode(id, data);
  if (info === null) return null;
  const e = info.endpoints.find((x) => x.listenerName === listener) ?? info.endpoints[0];
  if (e === undefined || e.host === null || e.host === "") return null;
  return { id, host: e.host, port: e.port, rack: info.rack };
}

async function dataOrNull(registry: Registry, path: string): Promise<Uint8Array | null> {
  try {
    return (await registry.getData(path)).data;
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return null;
    throw e;
  }
}
