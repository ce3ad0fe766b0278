// DescribeAcls (key 29), v0-3: the ACLs a filter matches, grouped by resource pattern. v1 adds the
// pattern type (v0 is literal only), v2 is flexible, v3 the same as v2.
import { api, message } from "../schema.ts";

export const DescribeAclsApi = api(
  message(29, "DescribeAclsRequest", "0-3", "2+", `
    resourceTypeFilter    int8
    resourceNameFilter    string  nullable
    patternTypeFilter     int8    v1+  default=3
    principalFilter       string  nullable
    hostFilter            string  nullable
    operation             int8
    permissionType        int8
  `),
  message(29, "DescribeAclsResponse", "0-3", "2+", `
    throttleTimeMs        int32
    errorCode             int16
    errorMessage          string  nullable
    resources             []
      resourceType        int8
      resourceName        string
      patternType         int8    v1+  default=3
      acls                []
        principal         string
        host              string
        operation         int8
        permissionType    int8
  `),
);
