// strand cluster info: the cluster id, the controller and the brokers, from one Metadata answer
// (what rpk cluster info shows first). strand cluster rolling-restart: rolling_restart.ts.
import { rollingRestart, rollingRestartOptions, rollingRestartUsage } from "./rolling_restart.ts";
import { commonOptionsUsage, Output, parseToolArgs, runTool, UsageError, withCluster } from "./tool.ts";

export const clusterUsage = `Usage: strand cluster info --bootstrap-server HOST:PORT[,...]
       strand cluster rolling-restart --admin-url URL --restart-command TEMPLATE [--dry-run]

info prints the cluster id, the controller and every broker (the controller marked with *).
rolling-restart restarts every broker in turn (see strand cluster rolling-restart --help).

Options:
${commonOptionsUsage}`;

export async function clusterCommand(args: string[]): Promise<never> {
  return await runTool("cluster", async () => {
    if (args[0] === "rolling-restart") {
      const { values } = parseToolArgs(args.slice(1), rollingRestartOptions, rollingRestartUsage);
      return await rollingRestart(values, new Output());
    }
    const { values, positionals } = parseToolArgs(args, {}, clusterUsage, 1);
    if (positionals[0] !== "info") {
      throw new UsageError(positionals[0] === undefined ? "a command is required: info or rolling-restart" : `unknown command "${positionals[0]}"`);
    }
    const out = new Output();
    await withCluster(values, async (c) => {
      const md = await c.retrying(() => c.refreshMetadata([]));
      out.text(`Cluster ID: ${md.clusterId ?? "-"}\n`);
      out.text(`Controller: ${md.controllerId < 0 ? "none" : md.controllerId}\n`);
      out.text(`Brokers: ${md.brokers.size}\n\n`);
      const rows = [["ID", "HOST", "PORT", "RACK"]];
      for (const b of [...md.brokers.values()].sort((x, y) => x.nodeId - y.nodeId)) {
        rows.push([`${b.nodeId}${b.nodeId === md.controllerId ? "*" : ""}`, b.host, String(b.port), b.rack ?? "-"]);
      }
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      for (const r of rows) out.text(r.map((cell, i) => cell.padEnd(widths[i] + 2)).join("").trimEnd() + "\n");
    });
    await out.flush();
  });
}
