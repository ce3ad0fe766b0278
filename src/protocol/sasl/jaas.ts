// Kafka's JAAS configuration text, as `sasl.jaas.config` and
// `listener.name.<listener>.<mechanism>.sasl.jaas.config` carry it:
//
//   org.apache.kafka.common.security.plain.PlainLoginModule required
//     username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";
//
// One login module, a control flag (required, requisite, sufficient, optional), then key=value
// options (value quoted, with \" and \\ escapes, or a bare word), ended by ';'. Comments (// and /* */)
// are allowed as Java's StreamTokenizer allows them. As in Kafka, the property holds exactly one module.

export interface JaasLoginModule {
  readonly loginModule: string;
  readonly controlFlag: "required" | "requisite" | "sufficient" | "optional";
  readonly options: ReadonlyMap<string, string>;
}

type Token = { kind: "word" | "quoted"; text: string } | { kind: "=" | ";" };

function tokenize(text: string): Token[] | string {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
    } else if (text.startsWith("//", i)) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end + 1;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) return "unterminated comment";
      i = end + 2;
    } else if (c === "=" || c === ";") {
      out.push({ kind: c });
      i++;
    } else if (c === '"') {
      let value = "";
      i++;
      for (;;) {
        if (i >= text.length) return "unterminated quoted value";
        const d = text[i++];
        if (d === '"') break;
        if (d === "\\" && i < text.length) {
          const e = text[i++];
          value += e === "n" ? "\n" : e === "t" ? "\t" : e === "r" ? "\r" : e;
        } else {
          value += d;
        }
      }
      out.push({ kind: "quoted", text: value });
    } else {
      const m = /^[^\s="';/]+/.exec(text.slice(i));
      if (m === null) return `unexpected character '${c}'`;
      out.push({ kind: "word", text: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

const controlFlags = new Set(["required", "requisite", "sufficient", "optional"]);

/** Parses one login module; a string answer says what is wrong (for a ConfigError naming the key). */
export function parseJaasConfig(text: string): JaasLoginModule | string {
  const tokens = tokenize(text);
  if (typeof tokens === "string") return tokens;
  let i = 0;
  const word = (): string | undefined => {
    const t = tokens[i];
    return t !== undefined && t.kind === "word" ? (i++, t.text) : undefined;
  };
  const loginModule = word();
  if (loginModule === undefined) return "expected a login module class name";
  const flag = word()?.toLowerCase();
  if (flag === undefined || !controlFlags.has(flag)) return `login module ${loginModule}: control flag must be one of required, requisite, sufficient, optional`;
  const options = new Map<string, string>();
  for (;;) {
    const t = tokens[i];
    if (t === undefined) return "JAAS config entry must end with ';'";
    if (t.kind === ";") {
      i++;
      break;
    }
    const key = word();
    if (key === undefined) return `expected an option name in ${loginModule}`;
    if (tokens[i]?.kind !== "=") return `option ${key}: expected '='`;
    i++;
    const v = tokens[i];
    if (v === undefined || (v.kind !== "word" && v.kind !== "quoted")) return `option ${key}: expected a value`;
    i++;
    options.set(key, v.text);
  }
  if (i !== tokens.length) return "JAAS config property contains more than one login module, should be 1 module";
  return { loginModule, controlFlag: flag as JaasLoginModule["controlFlag"], options };
}

/** The users PlainLoginModule's `user_<name>="<password>"` options define, by name. */
export function jaasPlainUsers(module: JaasLoginModule): Map<string, string> {
  const users = new Map<string, string>();
  for (const [key, value] of module.options) {
    if (key.startsWith("user_") && key.length > 5) users.set(key.slice(5), value);
  }
  return users;
}
