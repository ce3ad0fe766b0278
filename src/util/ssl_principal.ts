// Kafka's ssl.principal.mapping.rules: from a client certificate's distinguished name (RFC 2253,
// see x509.ts) to the name of its principal, User:<name>. Same syntax and results as Kafka's
// SslPrincipalMapper:
// - A comma-separated list, tried in order; the first rule that applies gives the name. A rule's
//   pattern may itself hold commas: a rule runs to the first comma after its third "/".
// - DEFAULT: the distinguished name itself.
// - RULE:pattern/replacement/ optionally followed by L or U (lower or upper case the result):
//   applies when pattern matches the whole name; the result is every match of pattern in the
//   name replaced (Java's replaceAll), with Java's replacement syntax ($1, ${name}, \ escapes).
//   A "$n" naming a group the pattern lacks is literal text (Kafka escapes it), with the digits of
//   a large n dropped from the right until it names one ($12 with one group is $1 then "2").
// - No rule applying is an authentication failure (Kafka's NoMatchingRule): name() gives null.
// Patterns are Java regular expressions run as JavaScript ones; the usual subset (groups, classes,
// lazy quantifiers, anchors) means the same in both, and one JavaScript cannot compile is refused.

const rulePattern = "(DEFAULT)|RULE:((\\\\.|[^\\\\/])*)/((\\\\.|[^\\\\/])*)/([LU]?).*?|(.*?)";
const ruleSplitter = new RegExp(`\\s*(${rulePattern})\\s*(,\\s*|$)`, "g");
const ruleParser = new RegExp(`^(?:${rulePattern})`);

/** One piece of a replacement: literal text, or a group by number or name. */
type Piece = string | { group: number } | { name: string };

interface Rule {
  readonly text: string;
  apply(dn: string): string | null;
}

const defaultRule: Rule = { text: "DEFAULT", apply: (dn) => dn };

/** Groups a pattern has: compile it with an empty alternative, which always matches. */
function groupCount(source: string): number {
  return new RegExp(`${source}|`).exec("")!.length - 1;
}

/** Java's Matcher.appendReplacement syntax, after Kafka's escaping of absent groups. */
function parseReplacement(text: string, groups: number, rule: string): Piece[] {
  const out: Piece[] = [];
  let literal = "";
  const flush = () => {
    if (literal !== "") out.push(literal);
    literal = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") {
      if (i + 1 >= text.length) throw new Error(`ssl.principal.mapping.rules: ${rule}: replacement ends in a lone "\\"`);
      literal += text[++i];
    } else if (c !== "$") {
      literal += c;
    } else if (text[i + 1] === "{") {
      const close = text.indexOf("}", i + 2);
      const name = close < 0 ? "" : text.slice(i + 2, close);
      if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name)) {
        throw new Error(`ssl.principal.mapping.rules: ${rule}: bad group name in replacement`);
      }
      flush();
      out.push({ name });
      i = close;
    } else if (/[0-9]/.test(text[i + 1] ?? "")) {
      const digits = /^[0-9]+/.exec(text.slice(i + 1))![0];
      let wanted = Number(digits);
      if (groups === 0 && !digits.startsWith("0")) {
        throw new Error(`ssl.principal.mapping.rules: ${rule}: replacement refers to group ${digits}, and the pattern has none`);
      }
      // Kafka's escaping: a reference to no group (after dropping digits) is literal text.
      while (!digits.startsWith("0") && wanted > groups && wanted >= 10) wanted = Math.floor(wanted / 10);
      if (!digits.startsWith("0") && wanted > groups) {
        literal += "$";
        continue;
      }
      // Java's parse: as many digits as still name a group.
      let group = Number(digits[0]);
      let used = 1;
      while (used < digits.length && group * 10 + Number(digits[used]) <= groups) group = group * 10 + Number(digits[used++]);
      flush();
      out.push({ group });
      i += used;
    } else {
      throw new Error(`ssl.principal.mapping.rules: ${rule}: "$" in a replacement must name a group (write \\$ for a dollar)`);
    }
  }
  flush();
  return out;
}

function makeRule(text: string, pattern: string, replacement: string, caseChange: string): Rule {
  let whole: RegExp;
  let every: RegExp;
  try {
    whole = new RegExp(`^(?:${pattern})$`);
    every = new RegExp(pattern, "g");
  } catch (err) {
    throw new Error(`ssl.principal.mapping.rules: ${text}: invalid pattern (${(err as Error).message})`, { cause: err });
  }
  const pieces = parseReplacement(replacement, groupCount(pattern), text);
  return {
    // As Kafka prints a rule (its toString), which is how a parsed rule list can be checked.
    text: `RULE:${pattern}/${replacement}${caseChange === "" ? "" : `/${caseChange}`}`,
    apply(dn: string): string | null {
      if (!whole.test(dn)) return null;
      const result = dn.replace(every, (...args: unknown[]) => {
        const last = args[args.length - 1];
        const named = typeof last === "object" && last !== null ? last as Record<string, string | undefined> : {};
        return pieces.map((p) =>
          typeof p === "string" ? p : "group" in p ? (args[p.group] as string | undefined) ?? "" : named[p.name] ?? ""
        ).join("");
      });
      if (caseChange === "L") return result.toLowerCase();
      if (caseChange === "U") return result.toUpperCase();
      return result;
    },
  };
}

export class SslPrincipalMapper {
  private constructor(private readonly rules: Rule[]) {}

  /** Parses ssl.principal.mapping.rules (unset: DEFAULT); throws an Error naming a bad rule. */
  static fromRules(rules: string | undefined): SslPrincipalMapper {
    const text = (rules ?? "DEFAULT").trim();
    const parsed: Rule[] = [];
    ruleSplitter.lastIndex = 0;
    for (let m = ruleSplitter.exec(text); m !== null; m = ruleSplitter.exec(text)) {
      if (m[0] === "") ruleSplitter.lastIndex++; // as Java's find() steps past an empty match
      const rule = m[1];
      const r = ruleParser.exec(rule)!;
      if (r[0].length !== rule.length) {
        const rest = rule.slice(r[0].length);
        throw new Error(`ssl.principal.mapping.rules: invalid rule \`${rule}\`, unmatched substring: \`${rest}\``);
      }
      if (r[1] !== undefined) parsed.push(defaultRule);
      else if (r[2] !== undefined) parsed.push(makeRule(rule, r[2], r[4], r[6]));
      // else an empty rule, which Kafka ignores
      if (ruleSplitter.lastIndex >= text.length && m[0] !== "") break;
    }
    return new SslPrincipalMapper(parsed);
  }

  /** The principal's name for a distinguished name, or null when no rule applies. */
  name(distinguishedName: string): string | null {
    for (const rule of this.rules) {
      const name = rule.apply(distinguishedName);
      if (name !== null) return name;
    }
    return null;
  }

  toString(): string {
    return `SslPrincipalMapper(rules = [${this.rules.map((r) => r.text).join(", ")}])`;
  }
}
