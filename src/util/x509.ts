// The subject of an X.509 certificate (DER) as the distinguished-name string Kafka builds an SSL
// principal from: Java's X500Principal.getName(), i.e. RFC 2253.
//
// What Java prints, and so what ssl.principal.mapping.rules are written against:
// - RDNs in reverse order of the certificate's sequence ("CN=alice,O=strand,C=GB" for a subject
//   encoded C, O, CN), joined by ","; the attributes of a multi-valued RDN joined by "+" in their
//   DER order.
// - Keywords only for CN, C, L, ST, O, OU, STREET, DC and UID; any other attribute (emailAddress,
//   serialNumber, ...) as its dotted OID with the value as "#" and the hex of its DER encoding.
// - Values of a string type (Printable, T61, IA5, General, UTF8, BMP, Universal) as their bytes
//   read as UTF-8 (whatever the type: Java's quirk, kept because ACLs name what Java prints), with
//   , = + < > # ; " \ escaped by a backslash wherever they are, and leading or trailing spaces
//   (and CRs) escaped too; a value of any other type as "#" and hex.
// Pure code: the certificate's bytes are read with bounds checks and a malformed one gives null,
// never an exception.

const rfc2253Keywords: Record<string, string> = {
  "2.5.4.3": "CN",
  "2.5.4.6": "C",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.9": "STREET",
  "0.9.2342.19200300.100.1.25": "DC",
  "0.9.2342.19200300.100.1.1": "UID",
};

const tagInteger = 0x02;
const tagOid = 0x06;
const tagUtf8 = 0x0c;
const tagPrintable = 0x13;
const tagT61 = 0x14;
const tagIa5 = 0x16;
const tagGeneral = 0x1b;
const tagUniversal = 0x1c;
const tagBmp = 0x1e;
const tagSequence = 0x30;
const tagSet = 0x31;
const tagVersion = 0xa0; // [0] EXPLICIT, constructed

/** A DER element: its tag, where its contents are, and where the whole element is. */
interface Element {
  tag: number;
  start: number; // first byte of the tag
  contentStart: number;
  end: number; // one past the last content byte
}

/** Reads the element at pos within [pos, limit); null when it is malformed or overruns limit. */
function elementAt(der: Uint8Array, pos: number, limit: number): Element | null {
  if (pos + 2 > limit) return null;
  const tag = der[pos];
  // Multi-byte tags (low bits 0x1f) do not occur in the parts of a certificate read here.
  if ((tag & 0x1f) === 0x1f) return null;
  let length = der[pos + 1];
  let at = pos + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    // Four length octets cover any certificate; more (or the indefinite form, 0) is not DER here.
    if (octets === 0 || octets > 4 || at + octets > limit) return null;
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + der[at + i];
    at += octets;
  }
  if (at + length > limit) return null;
  return { tag, start: pos, contentStart: at, end: at + length };
}

/** The elements directly inside a constructed element; null when any of them is malformed. */
function children(der: Uint8Array, parent: Element): Element[] | null {
  const out: Element[] = [];
  for (let pos = parent.contentStart; pos < parent.end;) {
    const e = elementAt(der, pos, parent.end);
    if (e === null) return null;
    out.push(e);
    pos = e.end;
  }
  return out;
}

function oidString(der: Uint8Array, e: Element): string | null {
  if (e.tag !== tagOid || e.end === e.contentStart) return null;
  const parts: number[] = [];
  let value = 0;
  for (let i = e.contentStart; i < e.end; i++) {
    value = value * 128 + (der[i] & 0x7f);
    if (!Number.isSafeInteger(value)) return null;
    if ((der[i] & 0x80) === 0) {
      parts.push(value);
      value = 0;
    }
  }
  if (der[e.end - 1] & 0x80) return null;
  const first = parts[0];
  const head = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80];
  return [...head, ...parts.slice(1)].join(".");
}

function hex(der: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) s += der[i].toString(16).padStart(2, "0");
  return s;
}

/**
 * A string-typed value as text, or null for a type Java prints as hex. Java decodes the bytes of
 * every string type as UTF-8 here, BMPString and T61String included (so "名" in a BMPString
 * prints as "T\r"); the same decoding gives the same principal names.
 */
function stringValue(der: Uint8Array, e: Element): string | null {
  switch (e.tag) {
    case tagUtf8:
    case tagPrintable:
    case tagIa5:
    case tagT61:
    case tagGeneral:
    case tagBmp:
    case tagUniversal:
      return utf8.decode(der.subarray(e.contentStart, e.end));
    default:
      return null;
  }
}

const utf8 = new TextDecoder("utf-8");

const escapees = ",=+<>#;\"\\";

function escapeValue(value: string): string {
  let s = "";
  for (const c of value) s += escapees.includes(c) ? `\\${c}` : c;
  // Leading and trailing blanks are escaped one by one (after the escapes above).
  let lead = 0;
  while (lead < s.length && (s[lead] === " " || s[lead] === "\r")) lead++;
  let trail = s.length - 1;
  while (trail >= 0 && (s[trail] === " " || s[trail] === "\r")) trail--;
  if (lead === 0 && trail === s.length - 1) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) out += i < lead || i > trail ? `\\${s[i]}` : s[i];
  return out;
}

function attributeString(der: Uint8Array, ava: Element): string | null {
  const parts = children(der, ava);
  if (ava.tag !== tagSequence || parts === null || parts.length !== 2) return null;
  const oid = oidString(der, parts[0]);
  if (oid === null) return null;
  const keyword = rfc2253Keywords[oid];
  const text = keyword === undefined ? null : stringValue(der, parts[1]);
  if (keyword === undefined || text === null) return `${keyword ?? oid}=#${hex(der, parts[1].start, parts[1].end)}`;
  return `${keyword}=${escapeValue(text)}`;
}

/** The RFC 2253 string of a Name (SEQUENCE OF RDN) element. */
function nameString(der: Uint8Array, name: Element): string | null {
  const rdns = children(der, name);
  if (name.tag !== tagSequence || rdns === null) return null;
  const out: string[] = [];
  for (const rdn of rdns) {
    const avas = children(der, rdn);
    if (rdn.tag !== tagSet || avas === null || avas.length === 0) return null;
    const texts: string[] = [];
    for (const ava of avas) {
      const t = attributeString(der, ava);
      if (t === null) return null;
      texts.push(t);
    }
    out.push(texts.join("+"));
  }
  return out.reverse().join(",");
}

/** The issuer and subject Name elements of a certificate, or null when it is malformed. */
function names(der: Uint8Array): { issuer: Element; subject: Element } | null {
  const cert = elementAt(der, 0, der.length);
  if (cert === null || cert.tag !== tagSequence) return null;
  const tbs = elementAt(der, cert.contentStart, cert.end);
  if (tbs === null || tbs.tag !== tagSequence) return null;
  const fields = children(der, tbs);
  if (fields === null) return null;
  // [version] serialNumber signature issuer validity subject ...
  let i = fields.length > 0 && fields[0].tag === tagVersion ? 1 : 0;
  if (fields.length < i + 5 || fields[i].tag !== tagInteger) return null;
  i += 2;
  return { issuer: fields[i], subject: fields[i + 2] };
}

/** The certificate's subject as Java's X500Principal.getName() prints it; null if malformed. */
export function subjectDistinguishedName(der: Uint8Array): string | null {
  const n = names(der);
  return n === null ? null : nameString(der, n.subject);
}

/** The certificate's issuer, printed the same way; null if malformed. */
export function issuerDistinguishedName(der: Uint8Array): string | null {
  const n = names(der);
  return n === null ? null : nameString(der, n.issuer);
}

/**
 * The blocks of a PEM file, by kind: Kafka's PEM keystore (ssl.keystore.type=PEM) holds the
 * private key and its certificate chain in one file, and a truststore holds certificates. Each
 * block is returned whole (BEGIN to END line, with a newline), in file order; text outside blocks
 * (comments, bag attributes openssl writes) is dropped.
 */
export function splitPem(text: string): { privateKeys: string[]; certificates: string[] } {
  const out = { privateKeys: [] as string[], certificates: [] as string[] };
  const block = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
  for (let m = block.exec(text); m !== null; m = block.exec(text)) {
    if (m[1] === "CERTIFICATE") out.certificates.push(`${m[0]}\n`);
    else if (m[1].endsWith("PRIVATE KEY")) out.privateKeys.push(`${m[0]}\n`);
  }
  return out;
}
