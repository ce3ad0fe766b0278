// CreateAcls (key 30), v0-3: one result per creation, in order. v1 adds the pattern type (v0 is
// literal only), v2 is flexible, v3 the same as v2.
import { api, message } from "../schema.ts";

export const CreateAclsApi = api(
  message(30, "CreateAclsRequest", "0-3", "2+", `
    creations             []
      resourceType        int8
      resourceName        string
      resourcePatternType int8    v1+  default=3
      principal           string
      host                string
      operation           int8
      permissionType      int8
  `),
  message(30, "CreateAclsResponse", "0-3", "2+", `
    throttleTimeMs        int32
    results               []
      errorCode           int16
      errorMessage        string  nullable
  `),
);
