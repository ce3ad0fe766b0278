// strand users list|describe|set|delete: SCRAM users over the Kafka protocol, the job of
// kafka-configs.sh --entity-type users --alter --add-config 'SCRAM-SHA-256=[password=...]'.
// The password is read from --password-file or from the first line of stdin, never from the
// command line (where `ps` shows it); the salted password is computed here and only it travels.
import { readFileSync } from "node:fs";
import { deleteScramCredential, describeScramCredentials, scramIterationsDefault, upsertScramCredential } from "../client/mod.ts";
import { commonOptionsUsage, int, Output, parseToolArgs, platform, required, runTool, str, UsageError, withCluster } from "./tool.ts";

export const usersUsage = `Usage: strand users COMMAND --bootstrap-server HOST:PORT[,HOST:PORT...] [options]

Commands:
  list       Users with SCRAM credentials, one per line.
  describe   [--user NAME]
             Each user's mechanisms and iteration counts (every user without --user).
  set        --user NAME --mechanism SCRAM-SHA-256|SCRAM-SHA-512 [--iterations N]
             [--password-file FILE]
             Adds or replaces the credential; the password is the first line of FILE, or of
             stdin without --password-file. Brokers use it within seconds (change notification).
  delete     --user NAME --mechanism SCRAM-SHA-256|SCRAM-SHA-512

Options:
${commonOptionsUsage}`;

const options = {
  user: { type: "string" as const },
  mechanism: { type: "string" as const },
  iterations: { type: "string" as const },
  "password-file": { type: "string" as const },
};

/** The first line of the file, or of stdin: a password, with its line ending removed. */
function readPassword(file: string | undefined): string {
  let text: string;
  try {
    text = readFileSync(file ?? 0, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read the password from ${file ?? "stdin"}: ${(e as Error).message}`);
  }
  const password = text.split(/\r?\n/)[0];
  if (password === "") throw new UsageError(`the password (first line of ${file ?? "stdin"}) is empty`);
  return password;
}

export async function usersCommand(args: string[]): Promise<never> {
  return await runTool("users", async () => {
    const { values, positionals } = parseToolArgs(args, options, usersUsage, 1);
    const command = positionals[0];
    const out = new Output();
    switch (command) {
      case "list":
        await withCluster(values, async (c) => {
          for (const u of await describeScramCredentials(c, null)) out.text(`${u.user}\n`);
        });
        break;
      case "describe": {
        const user = str(values, "user");
        await withCluster(values, async (c) => {
          for (const u of await describeScramCredentials(c, user === undefined ? null : [user])) {
            const creds = u.credentials.map((x) => `${x.mechanism}=iterations=${x.iterations}`).join(", ");
            out.text(`User: ${u.user}\t${creds}\n`);
          }
        });
        break;
      }
      case "set": {
        const user = required(values, "user");
        const mechanism = required(values, "mechanism").toUpperCase();
        const iterations = int(values, "iterations", scramIterationsDefault, 1, 2_147_483_647);
        const password = readPassword(str(values, "password-file"));
        await withCluster(values, async (c) => {
          await upsertScramCredential(c, await platform(), user, mechanism, password, iterations);
          out.text(`Set the ${mechanism} credential of ${user} (${iterations} iterations).\n`);
        });
        break;
      }
      case "delete": {
        const user = required(values, "user");
        const mechanism = required(values, "mechanism").toUpperCase();
        await withCluster(values, async (c) => {
          await deleteScramCredential(c, user, mechanism);
          out.text(`Deleted the ${mechanism} credential of ${user}.\n`);
        });
        break;
      }
      case undefined:
        throw new UsageError("a command is required: list, describe, set or delete");
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
    await out.flush();
  });
}

