// DescribeConfigs (key 32), v0-4. A resource is (type, name): 2 = topic, 4 = broker (its id, or
// "" for the cluster-wide dynamic defaults), 8 = broker logger. configurationKeys null (or empty)
// asks for every key. v1 adds synonyms and each entry's source (replacing v0's isDefault), v3 the
// data type and documentation, v4 is flexible.
import { api, message } from "../schema.ts";

export const DescribeConfigsApi = api(
  message(32, "DescribeConfigsRequest", "0-4", "4+", `
    resources               []
      resourceType          int8
      resourceName          string
      configurationKeys     []string  nullable
    includeSynonyms         bool    v1+  default=false
    includeDocumentation    bool    v3+  default=false
  `),
  message(32, "DescribeConfigsResponse", "0-4", "4+", `
    throttleTimeMs          int32
    results                 []
      errorCode             int16
      errorMessage          string  nullable
      resourceType          int8
      resourceName          string
      configs               []
        name                string
        value               string  nullable
        readOnly            bool
        isDefault           bool    v0
        configSource        int8    v1+  default=-1
        isSensitive         bool
        synonyms            []      v1+
          name              string
          value             string  nullable
          source            int8
        configType          int8    v3+  default=0
        documentation       string  v3+  nullable
  `),
);
