// AlterClientQuotas (key 49), v0-1 (v1+ flexible), KIP-546: sets or removes quota keys of entities
// (a user, a client id, or both; a null name is the default entity). One result per entry;
// validateOnly checks without writing.
import { api, message } from "../schema.ts";

export const AlterClientQuotasApi = api(
  message(49, "AlterClientQuotasRequest", "0-1", "1+", `
    entries               []
      entity              []
        entityType        string
        entityName        string  nullable
      ops                 []
        key               string
        value             float64
        remove            bool
    validateOnly          bool
  `),
  message(49, "AlterClientQuotasResponse", "0-1", "1+", `
    throttleTimeMs        int32
    entries               []
      errorCode           int16
      errorMessage        string  nullable
      entity              []
        entityType        string
        entityName        string  nullable
  `),
);
