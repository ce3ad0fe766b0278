// DeleteAcls (key 31), v0-3: per filter, the ACLs it matched and deleted. v1 adds the pattern
// type (v0 is literal only), v2 is flexible, v3 the same as v2.
import { api, message } from "../schema.ts";

export const DeleteAclsApi = api(
  message(31, "DeleteAclsRequest", "0-3", "2+", `
    filters               []
      resourceTypeFilter  int8
      resourceNameFilter  string  nullable
      patternTypeFilter   int8    v1+  default=3
      principalFilter     string  nullable
      hostFilter          string  nullable
      operation           int8
      permissionType      int8
  `),
  message(31, "DeleteAclsResponse", "0-3", "2+", `
    throttleTimeMs        int32
    filterResults         []
      errorCode           int16
      errorMessage        string  nullable
      matchingAcls        []
        errorCode         int16
        errorMessage      string  nullable
        resourceType      int8
        resourceName      string
        patternType       int8    v1+  default=3
        principal         string
        host              string
        operation         int8
        permissionType    int8
  `),
);
