// SCRAM users over the Kafka protocol, as Kafka's Admin client manages them: AlterUserScramCredentials
// (the client makes the salt and the salted password; the password never leaves this process) and
// DescribeUserScramCredentials (mechanisms and iteration counts, never keys).
import type { Platform } from "../platform/mod.ts";
import {
  AlterUserScramCredentialsApi,
  DescribeUserScramCredentialsApi,
  scramMechanismByName,
  scramMechanismByType,
  scramSaltedPassword,
  type Struct,
} from "../protocol/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import { ClientError, type ClusterClient, errorFor } from "./cluster_client.ts";

/** Kafka's default iteration count for a new credential (ScramCredentialUtils / kafka-configs.sh). */
export const scramIterationsDefault = 4096;
/** Bytes of random salt per credential. */
const saltBytes = 32;

export interface ScramUserDescription {
  user: string;
  credentials: { mechanism: string; iterations: number }[];
}

/** Adds or replaces `user`'s credential for `mechanism` (SCRAM-SHA-256 or SCRAM-SHA-512). */
export async function upsertScramCredential(
  c: ClusterClient,
  platform: Platform,
  user: string,
  mechanism: string,
  password: string,
  iterations = scramIterationsDefault,
): Promise<void> {
  const mech = scramMechanismByName(mechanism);
  if (mech === undefined) throw new ClientError(`unknown SCRAM mechanism ${mechanism} (SCRAM-SHA-256, SCRAM-SHA-512)`);
  const salt = new Uint8Array(saltBytes);
  platform.randomBytes(salt);
  const saltedPassword = await scramSaltedPassword(mech, password, salt, iterations);
  await alter(c, user, { deletions: [], upsertions: [{ name: user, mechanism: mech.type, iterations, salt, saltedPassword }] });
}

/** Removes `user`'s credential for `mechanism`. */
export async function deleteScramCredential(c: ClusterClient, user: string, mechanism: string): Promise<void> {
  const mech = scramMechanismByName(mechanism);
  if (mech === undefined) throw new ClientError(`unknown SCRAM mechanism ${mechanism} (SCRAM-SHA-256, SCRAM-SHA-512)`);
  await alter(c, user, { deletions: [{ name: user, mechanism: mech.type }], upsertions: [] });
}

async function alter(c: ClusterClient, user: string, body: Struct): Promise<void> {
  await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, AlterUserScramCredentialsApi, 0, () => body);
    for (const r of res.results as { user: string; errorCode: number; errorMessage: string | null }[]) {
      if (r.errorCode !== ErrorCode.NONE) throw errorFor(r.errorCode, `cannot change the SCRAM credentials of ${user}`, r.errorMessage);
    }
  });
}

/** The SCRAM credentials of `users` (null: every user that has one). */
export async function describeScramCredentials(c: ClusterClient, users: string[] | null): Promise<ScramUserDescription[]> {
  return await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, DescribeUserScramCredentialsApi, 0, () => ({ users: users === null ? null : users.map((name) => ({ name })) }));
    if (res.errorCode !== ErrorCode.NONE) throw errorFor(res.errorCode as number, "cannot describe SCRAM credentials", res.errorMessage as string | null);
    const out: ScramUserDescription[] = [];
    for (const r of res.results as { user: string; errorCode: number; errorMessage: string | null; credentialInfos: { mechanism: number; iterations: number }[] }[]) {
      if (r.errorCode !== ErrorCode.NONE) throw errorFor(r.errorCode, `cannot describe the SCRAM credentials of ${r.user}`, r.errorMessage);
      out.push({
        user: r.user,
        credentials: r.credentialInfos.map((i) => ({ mechanism: scramMechanismByType(i.mechanism)?.name ?? `mechanism ${i.mechanism}`, iterations: i.iterations })),
      });
    }
    return out;
  });
}
