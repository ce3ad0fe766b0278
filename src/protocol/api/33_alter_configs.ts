// AlterConfigs (key 33), v0-2: replaces a resource's whole set of dynamic config overrides (keys
// left out are removed). validateOnly checks without changing anything. v2 is flexible.
import { api, message } from "../schema.ts";

export const AlterConfigsApi = api(
  message(33, "AlterConfigsRequest", "0-2", "2+", `
    resources               []
      resourceType          int8
      resourceName          string
      configs               []
        name                string
        value               string  nullable
    validateOnly            bool
  `),
  message(33, "AlterConfigsResponse", "0-2", "2+", `
    throttleTimeMs          int32
    responses               []
      errorCode             int16
      errorMessage          string  nullable
      resourceType          int8
      resourceName          string
  `),
);
