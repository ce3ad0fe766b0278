// DescribeUserScramCredentials (key 50), v0 (flexible): the SCRAM mechanisms and iteration counts
// each user has (never the keys). Null or empty users means every user with a credential.
import { api, message } from "../schema.ts";

export const DescribeUserScramCredentialsApi = api(
  message(50, "DescribeUserScramCredentialsRequest", "0", "0+", `
    users                 []      nullable
      name                string
  `),
  message(50, "DescribeUserScramCredentialsResponse", "0", "0+", `
    throttleTimeMs        int32
    errorCode             int16
    errorMessage          string  nullable
    results               []
      user                string
      errorCode           int16
      errorMessage        string  nullable
      credentialInfos     []
        mechanism         int8
        iterations        int32
  `),
);
