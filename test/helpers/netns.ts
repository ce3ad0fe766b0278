// Hosts for tests as network namespaces (`ip netns`, needs root): n namespaces, one veth pair per
// pair of hosts (so one link can be cut with `ip link set … down`), and one veth pair from the
// test's own (root) namespace to each host, so clients in the test reach every host even when the
// hosts are cut off from each other.
//
// - Names derive from the pid (namespaces strand-<pid>-h<i>, root-side devices s<pid>c<i>), so
//   parallel runs do not collide. Host i's address is 10.77.K.i (on its loopback, routed over
//   each link); the root side of its client link is 10.77.K.(100+i). K is chosen from the pid
//   among the /24s no address in the root namespace uses yet.
// - destroy() kills every process left in the namespaces and deletes them (the veths go with
//   them); it also runs at process exit, so a crashed test leaves nothing behind.
import { spawnSync } from "node:child_process";
import process from "node:process";

function ip(args: string[], allowFail = false): string {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  if (r.status !== 0 && !allowFail) throw new Error(`ip ${args.join(" ")}: ${r.error?.message ?? r.stderr.trim()} (exit ${r.status})`);
  return r.stdout ?? "";
}

/** The reason namespaces cannot be made here, or null when they can (tried for real). */
function netnsUnavailable(): string | null {
  const probe = `strand-${process.pid}-probe`;
  const r = spawnSync("ip", ["netns", "add", probe], { encoding: "utf8" });
  if (r.error !== undefined) return `no ip command (Debian package iproute2): ${r.error.message}`;
  if (r.status !== 0) return `ip netns add failed (root and CAP_SYS_ADMIN are needed): ${r.stderr.trim()}`;
  const veth = spawnSync("ip", ["link", "add", "name", "a", "netns", probe, "type", "veth", "peer", "name", "b", "netns", probe], { encoding: "utf8" });
  spawnSync("ip", ["netns", "del", probe]);
  if (veth.status !== 0) return `veth pairs cannot be made: ${veth.stderr.trim()}`;
  return null;
}

/** The `skip` option for a test needing network namespaces; under CI=true their absence fails. */
export function skipUnlessNetns(): string | false {
  const why = netnsUnavailable();
  if (why === null) return false;
  if (process.env.CI === "true") throw new Error(`CI=true and network namespaces cannot be made: ${why}`);
  return `needs network namespaces: ${why}`;
}

export class NetHosts {
  private destroyed = false;
  private readonly onExit = () => this.destroySync();
  /** Interrupted (Ctrl-C, a runner's SIGTERM): no "exit" event then, so clean up and exit here. */
  private readonly onSignal = (sig: NodeJS.Signals) => {
    this.destroySync();
    process.exit(sig === "SIGINT" ? 130 : 143);
  };

  private constructor(readonly n: number, readonly subnet: number) {
    process.on("exit", this.onExit);
    process.on("SIGINT", this.onSignal);
    process.on("SIGTERM", this.onSignal);
  }

  /** Makes n hosts, fully connected. */
  static create(n = 3): NetHosts {
    const used = ip(["-o", "-4", "addr", "show"]) + ip(["-4", "route", "show"]);
    let k = 20 + (process.pid % 200);
    for (let tries = 0; used.includes(`10.77.${k}.`); tries++) {
      if (tries > 200) throw new Error("no free 10.77.K.0/24 in the root namespace");
      k = 20 + ((k - 19) % 200);
    }
    const h = new NetHosts(n, k);
    try {
      for (let i = 1; i <= n; i++) {
        ip(["netns", "add", h.ns(i)]);
        ip(["-n", h.ns(i), "link", "set", "lo", "up"]);
        ip(["-n", h.ns(i), "addr", "add", `${h.addr(i)}/32`, "dev", "lo"]);
        // The client link: root side s<pid>c<i> (10.77.K.100+i), host side c0.
        const dev = h.clientDev(i);
        ip(["link", "add", dev, "type", "veth", "peer", "name", "c0", "netns", h.ns(i)]);
        ip(["addr", "add", h.clientAddr(i), "peer", h.addr(i), "dev", dev]);
        ip(["link", "set", dev, "up"]);
        ip(["-n", h.ns(i), "link", "set", "c0", "up"]);
        ip(["-n", h.ns(i), "route", "add", `${h.clientAddr(i)}/32`, "dev", "c0", "src", h.addr(i)]);
      }
      for (let i = 1; i <= n; i++) {
        for (let j = i + 1; j <= n; j++) {
          // In host i the link to j is h<j>, in host j the link to i is h<i>.
          ip(["link", "add", "name", `h${j}`, "netns", h.ns(i), "type", "veth", "peer", "name", `h${i}`, "netns", h.ns(j)]);
          h.linkUp(i, j);
        }
      }
    } catch (e) {
      h.destroySync();
      throw e;
    }
    return h;
  }

  ns(i: number): string {
    return `strand-${process.pid}-h${i}`;
  }

  addr(i: number): string {
    return `10.77.${this.subnet}.${i}`;
  }

  private clientAddr(i: number): string {
    return `10.77.${this.subnet}.${100 + i}`;
  }

  private clientDev(i: number): string {
    return `s${process.pid}c${i}`;
  }

  /** `ip netns exec <ns of host i>`: put before a command to run it on host i. */
  exec(i: number): string[] {
    return ["ip", "netns", "exec", this.ns(i)];
  }

  private linkUp(i: number, j: number): void {
    for (const [a, b] of [[i, j], [j, i]]) {
      ip(["-n", this.ns(a), "link", "set", `h${b}`, "up"]);
      // Taking a device down drops its routes: put the route back each time.
      ip(["-n", this.ns(a), "route", "replace", `${this.addr(b)}/32`, "dev", `h${b}`, "src", this.addr(a)]);
    }
  }

  /** Cuts the link between hosts i and j (both ends down: nothing passes either way). */
  cut(i: number, j: number): void {
    const [a, b] = i < j ? [i, j] : [j, i];
    ip(["-n", this.ns(a), "link", "set", `h${b}`, "down"]);
    ip(["-n", this.ns(b), "link", "set", `h${a}`, "down"]);
  }

  heal(i: number, j: number): void {
    this.linkUp(Math.min(i, j), Math.max(i, j));
  }

  /** Cuts host i from every other host (its client link stays). */
  isolate(i: number): void {
    for (let j = 1; j <= this.n; j++) if (j !== i) this.cut(i, j);
  }

  rejoin(i: number): void {
    for (let j = 1; j <= this.n; j++) if (j !== i) this.heal(i, j);
  }

  /** The pids of every process in host i's namespace. */
  pids(i: number): number[] {
    return ip(["netns", "pids", this.ns(i)], true).split("\n").filter((l) => /^\d+$/.test(l.trim())).map(Number);
  }

  /** SIGKILLs every process on host i (a host dying); returns how many there were. */
  killAll(i: number): number {
    const pids = this.pids(i);
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    return pids.length;
  }

  /** Kills what still runs in the namespaces, deletes them (their veths go too). Idempotent. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    process.off("exit", this.onExit);
    process.off("SIGINT", this.onSignal);
    process.off("SIGTERM", this.onSignal);
    for (let i = 1; i <= this.n; i++) {
      this.killAll(i);
      ip(["netns", "del", this.ns(i)], true);
      ip(["link", "del", this.clientDev(i)], true);
    }
  }
}
