// DescribeClientQuotas (key 48), v0-1 (v1+ flexible), KIP-546: the quotas of the entities a filter
// matches. Each component names an entity type ("user", "client-id", "ip") and a match type:
// 0 exact name (match), 1 the default entity, 2 any specified name; strict leaves out entities
// with parts the filter does not name. entries is null when errorCode is set.
import { api, message } from "../schema.ts";

export const DescribeClientQuotasApi = api(
  message(48, "DescribeClientQuotasRequest", "0-1", "1+", `
    components            []
      entityType          string
      matchType           int8
      match               string  nullable
    strict                bool
  `),
  message(48, "DescribeClientQuotasResponse", "0-1", "1+", `
    throttleTimeMs        int32
    errorCode             int16
    errorMessage          string  nullable
    entries               []      nullable
      entity              []
        entityType        string
        entityName        string  nullable
      values              []
        key               string
        value             float64
  `),
);
