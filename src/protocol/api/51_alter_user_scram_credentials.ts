// AlterUserScramCredentials (key 51), v0 (flexible): deletes and upserts SCRAM credentials. The
// client sends the salt and the salted password (never the password), from which the broker
// derives stored_key and server_key; one result per user touched.
import { api, message } from "../schema.ts";

export const AlterUserScramCredentialsApi = api(
  message(51, "AlterUserScramCredentialsRequest", "0", "0+", `
    deletions             []
      name                string
      mechanism           int8
    upsertions            []
      name                string
      mechanism           int8
      iterations          int32
      salt                bytes
      saltedPassword      bytes
  `),
  message(51, "AlterUserScramCredentialsResponse", "0", "0+", `
    throttleTimeMs        int32
    results               []
      user                string
      errorCode           int16
      errorMessage        string  nullable
  `),
);
