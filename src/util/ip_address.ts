// IP address literals in one spelling per address, as Java's InetAddress parses them: the
// SocketServer keys its per-ip limits and ConnectionInfo.host by it, the ip quotas store it, and
// the authorizer compares ACL hosts with it, so "::FFFF:10.0.0.1", "10.0.0.1", "0:0:0:0:0:0:0:1"
// and "::1" are each seen as one address.

/**
 * An IP address literal in one form per address (Kafka keys ip quotas by InetAddress): IPv4 as
 * dotted decimal, IPv6 compressed and lower case (RFC 5952), an IPv4-mapped IPv6 address as its
 * IPv4 address; null when the text is no IP address. Host names are not resolved.
 */
export function canonicalIp(text: string): string | null {
  const v4 = (t: string): number[] | null => {
    const parts = t.split(".");
    if (parts.length !== 4 || parts.some((p) => !/^[0-9]{1,3}$/.test(p) || Number(p) > 255)) return null;
    return parts.map(Number);
  };
  const four = v4(text);
  if (four !== null) return four.join(".");
  let t = text.toLowerCase();
  if (t.startsWith("[") && t.endsWith("]")) t = t.slice(1, -1);
  if (!/^[0-9a-f:.]+$/.test(t) || t.length > 45) return null;
  // A dotted IPv4 tail stands for the last two groups.
  const lastColon = t.lastIndexOf(":");
  if (t.includes(".")) {
    const tail = v4(t.slice(lastColon + 1));
    if (tail === null) return null;
    t = `${t.slice(0, lastColon + 1)}${((tail[0] << 8) | tail[1]).toString(16)}:${((tail[2] << 8) | tail[3]).toString(16)}`;
  }
  const halves = t.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groupsOf(halves[0]), tail = halves.length === 2 ? groupsOf(halves[1]) : [];
  if ([...head, ...tail].some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail].map((g) => parseInt(g, 16));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  }
  // RFC 5952: the longest run of two or more zero groups (the first of equals) becomes "::".
  let bestAt = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestAt, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestAt < 0) return hex.join(":");
  return `${hex.slice(0, bestAt).join(":")}::${hex.slice(bestAt + bestLen).join(":")}`;
}
