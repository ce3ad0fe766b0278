// Java .properties parsing, as far as Kafka's server.properties uses it: `key=value` or
// `key: value` lines, `#` and `!` comments, blank lines, and `\` at line end continuing a value.

export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trimStart();
    if (line === "" || line.startsWith("#") || line.startsWith("!")) continue;
    while (line.endsWith("\\") && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i].trimStart();
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (m === null) out.set(line.trim(), "");
    else out.set(m[1], m[2].trim());
  }
  return out;
}

/** STRAND_LOG_DIRS=... → log.dirs=...: upper case and underscores, as Kafka's images map KAFKA_*. */
export function propertiesFromEnv(env: Record<string, string | undefined>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith("STRAND_") || v === undefined) continue;
    if (k === "STRAND_LOG_LEVEL") continue;
    out.set(k.slice("STRAND_".length).toLowerCase().replaceAll("_", "."), v);
  }
  return out;
}
