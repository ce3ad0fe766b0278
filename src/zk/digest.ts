// The "digest" auth scheme: a session authenticates with `addAuth("digest", "user:password")`,
// and ACLs name it as the id `user:base64(sha1("user:password"))`
// (DigestAuthenticationProvider.generateDigest). SHA-1 comes from Web Crypto, which both
// runtimes provide as a global; it is not an I/O API.

import { utf8Bytes } from "../util/mod.ts";
import { ZkError } from "./errors.ts";
import { type AclValue, Perms } from "./records.ts";

/** Splits "user:password" at the first colon; throws BadArguments when there is none. */
export function splitCredential(credential: string): { user: string; password: string } {
  const colon = typeof credential === "string" ? credential.indexOf(":") : -1;
  if (colon <= 0) throw new ZkError("BadArguments", "", "a digest credential is user:password");
  return { user: credential.slice(0, colon), password: credential.slice(colon + 1) };
}

/** The ACL id for a digest credential: `user:base64(sha1(user:password))`. */
export async function digestId(credential: string): Promise<string> {
  const { user } = splitCredential(credential);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-1", new Uint8Array(utf8Bytes(credential))));
  return `${user}:${btoa(String.fromCharCode(...hash))}`;
}

/** An ACL granting perms to the holder of credential. */
export async function digestAcl(credential: string, perms: number = Perms.ALL): Promise<AclValue> {
  return { perms, id: { scheme: "digest", id: await digestId(credential) } };
}
