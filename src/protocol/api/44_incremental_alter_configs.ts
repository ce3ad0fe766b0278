// IncrementalAlterConfigs (key 44), v0-1: changes some of a resource's config overrides, key by
// key. configOperation: 0 SET, 1 DELETE (back to the default), 2 APPEND and 3 SUBTRACT (list-type
// keys only: add or remove comma-separated elements). v1 is flexible.
import { api, message } from "../schema.ts";

export const IncrementalAlterConfigsApi = api(
  message(44, "IncrementalAlterConfigsRequest", "0-1", "1+", `
    resources               []
      resourceType          int8
      resourceName          string
      configs               []
        name                string
        configOperation     int8
        value               string  nullable
    validateOnly            bool
  `),
  message(44, "IncrementalAlterConfigsResponse", "0-1", "1+", `
    throttleTimeMs          int32
    responses               []
      errorCode             int16
      errorMessage          string  nullable
      resourceType          int8
      resourceName          string
  `),
);
