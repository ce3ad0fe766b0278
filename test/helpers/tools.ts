// External tools the e2e tests drive (kcat, the Debian Python and Go clients, Chromium for the
// dashboard, rsyslog's omkafka, Burrow). A missing tool skips the test with a message naming the
// Debian package; under CI=true a missing tool fails instead, so CI can never pass by skipping.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const packages: Record<string, string> = {
  kcat: "kcat",
  confluent_kafka: "python3-confluent-kafka",
  kafka: "python3-kafka",
  chromium: "chromium",
  sarama: "golang-go golang-github-shopify-sarama-dev",
  "kafka-go": "golang-go golang-github-segmentio-kafka-go-dev",
  "confluent-kafka-go": "golang-go golang-github-confluentinc-confluent-kafka-go-dev librdkafka-dev pkg-config",
  omkafka: "rsyslog rsyslog-kafka",
  burrow: "burrow",
};

// The Go libraries' GOPATH sources (and librdkafka's header for cgo), built with `go`.
const goSources: Record<string, string[]> = {
  sarama: ["/usr/share/gocode/src/github.com/Shopify/sarama"],
  "kafka-go": ["/usr/share/gocode/src/github.com/segmentio/kafka-go"],
  "confluent-kafka-go": ["/usr/share/gocode/src/github.com/confluentinc/confluent-kafka-go", "/usr/include/librdkafka/rdkafka.h"],
};

function has(tool: string): boolean {
  if (tool in goSources) return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0 && goSources[tool].every((f) => existsSync(f));
  if (tool === "omkafka") {
    const q = spawnSync("dpkg-query", ["-W", "-f=${Status}", "rsyslog-kafka"], { encoding: "utf8" });
    return q.stdout === "install ok installed" && existsSync("/usr/sbin/rsyslogd");
  }
  if (tool === "burrow") return existsSync("/usr/bin/Burrow");
  if (tool === "kcat") return spawnSync("kcat", ["-V"], { stdio: "ignore" }).status === 0;
  if (tool === "chromium") return spawnSync("/usr/bin/chromium", ["--version"], { stdio: "ignore" }).status === 0;
  return spawnSync("/usr/bin/python3", ["-c", `import ${tool}`], { stdio: "ignore" }).status === 0;
}

/** The `skip` option for a test needing tool: false when present, else the reason. */
export function skipUnless(tool: string): string | false {
  if (has(tool)) return false;
  const why = `needs ${tool} (Debian package ${packages[tool] ?? tool})`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${why} is missing: .ci/run must install it`);
  return why;
}

export interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs a command with optional stdin, bounded in time; never throws for a non-zero exit. */
export function run(cmd: string, args: string[], opts: { input?: Buffer | string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${cmd} ${args.join(" ")} timed out after ${opts.timeoutMs ?? 60000} ms; stderr: ${err.slice(-2000)}`));
    }, opts.timeoutMs ?? 60000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    child.stdin.on("error", () => {});
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** Stops a long-running tool: SIGTERM (which lets it flush), then SIGKILL after graceMs. */
export function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
