// ConnectionQuotas: the counts and limits on open connections, as Kafka's ConnectionQuotas keeps
// them (KIP-402): max.connections across the broker, listener.name.<l>.max.connections per
// listener, max.connections.per.ip with its overrides per address. All are dynamic broker configs
// (setLimits).
//
// Kafka's rules, kept here:
// - A listener's new connection needs a slot: fewer open on the listener than its own limit and,
//   unless it is the protected (inter-broker) listener, fewer open on the broker than
//   max.connections. Without one it waits, unread, in arrival order behind the listener's other
//   waiting connections (Kafka's acceptor blocks in waitForConnectionSlot and the kernel backlog
//   holds them), until a connection closes or a limit is raised. Past
//   limits.connectionsWaitingForSlotMax waiting, new ones are closed, as a full backlog refuses.
// - Past the slot, an address over its max.connections.per.ip is refused (closed) at once.
// - When more connections are open than max.connections (the protected listener went past it, or
//   the limit was lowered), the least recently active connections of the other listeners are
//   closed until it holds again (Kafka's Processor.closeExcessConnections, one per poll there).
//   A lower listener or per-address limit closes nothing: only new connections wait or are refused.
//
// Invariant: total === the sum of perListener === the sum of perIp; counts never go below 0.

import { connectionsWaitingForSlotMax } from "../util/mod.ts";

/** One listener's own connection limits (KIP-402, KIP-612). */
export interface ListenerConnectionLimits {
  maxConnections?: number;
  maxConnectionCreationRate?: number;
}

/**
 * The limits on accepting connections; dynamic broker configs, so they may change while the
 * server runs (SocketServer.setConnectionLimits).
 */
export interface ConnectionLimits {
  /** max.connections: open connections across the listeners (not counting the protected one's). */
  maxConnections?: number;
  /** max.connections.per.ip, and its overrides by address. */
  maxConnectionsPerIp?: number;
  maxConnectionsPerIpOverrides?: Map<string, number>;
  /** max.connection.creation.rate: connections accepted per second; the excess waits its turn. */
  maxConnectionCreationRate?: number;
  /**
   * listener.name.<l>.max.connections and .max.connection.creation.rate, by listener name; when
   * given, they replace the ServerListener's own values (a listener missing here has none).
   */
  listenerLimits?: ReadonlyMap<string, ListenerConnectionLimits>;
}

interface Waiting {
  admit: () => void;
  abandon: () => void;
}

export class ConnectionQuotas {
  private total = 0;
  private readonly perListener = new Map<string, number>();
  private readonly perIp = new Map<string, number>();
  private readonly waiting = new Map<string, Waiting[]>();
  private waitingTotal = 0;

  constructor(
    private limits: ConnectionLimits,
    /** The inter-broker listener when there are others (Kafka's protectedListener), else null. */
    private readonly protectedListener: string | null,
  ) {}

  get current(): ConnectionLimits {
    return this.limits;
  }

  /** Connections waiting for a slot. */
  get waitingCount(): number {
    return this.waitingTotal;
  }

  /** New limits: waiting connections that now have a slot are admitted. */
  setLimits(limits: ConnectionLimits): void {
    this.limits = limits;
    this.drain();
  }

  listenerLimit(listener: string): ListenerConnectionLimits {
    return this.limits.listenerLimits?.get(listener) ?? {};
  }

  /**
   * Admits now (admit() called), queues until a slot frees ("waiting"), or, with the queue full,
   * answers the limit that refuses the connection (the caller closes it; abandon is not called).
   */
  waitForSlot(listener: string, admit: () => void, abandon: () => void): "admitted" | "waiting" | string {
    const queue = this.waiting.get(listener);
    if ((queue === undefined || queue.length === 0) && this.slotAvailable(listener)) {
      admit();
      return "admitted";
    }
    if (this.waitingTotal >= connectionsWaitingForSlotMax) return this.blockingLimit(listener);
    if (queue === undefined) this.waiting.set(listener, [{ admit, abandon }]);
    else queue.push({ admit, abandon });
    this.waitingTotal++;
    return "waiting";
  }

  /** The per-address limit for `ip` (a connectionHost spelling). */
  perIpMax(ip: string): number {
    return this.limits.maxConnectionsPerIpOverrides?.get(ip) ?? this.limits.maxConnectionsPerIp ?? Infinity;
  }

  ipCount(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }

  inc(listener: string, ip: string): void {
    this.total++;
    this.perListener.set(listener, (this.perListener.get(listener) ?? 0) + 1);
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
  }

  /** A connection closed: its slot goes to the first waiting connection that may take it. */
  dec(listener: string, ip: string): void {
    this.total--;
    this.perListener.set(listener, (this.perListener.get(listener) ?? 1) - 1);
    const left = (this.perIp.get(ip) ?? 1) - 1;
    if (left === 0) this.perIp.delete(ip);
    else this.perIp.set(ip, left);
    this.drain();
  }

  /** How many connections of the listeners other than the protected one are over max.connections. */
  excess(): number {
    return Math.max(0, this.total - (this.limits.maxConnections ?? Infinity));
  }

  isProtected(listener: string): boolean {
    return listener === this.protectedListener;
  }

  /** Closes every waiting connection (the server stops). */
  abandonAll(): void {
    for (const queue of this.waiting.values()) for (const w of queue.splice(0)) w.abandon();
    this.waitingTotal = 0;
  }

  private slotAvailable(listener: string): boolean {
    if ((this.perListener.get(listener) ?? 0) >= (this.listenerLimit(listener).maxConnections ?? Infinity)) return false;
    return this.isProtected(listener) || this.total < (this.limits.maxConnections ?? Infinity);
  }

  /** The key of the limit a listener's new connection waits for. */
  private blockingLimit(listener: string): string {
    if ((this.perListener.get(listener) ?? 0) >= (this.listenerLimit(listener).maxConnections ?? Infinity)) {
      return `listener.name.${listener.toLowerCase()}.max.connections`;
    }
    return "max.connections";
  }

  private drain(): void {
    for (const [listener, queue] of this.waiting) {
      while (queue.length > 0 && this.slotAvailable(listener)) {
        this.waitingTotal--;
        queue.shift()!.admit();
      }
    }
  }
}
