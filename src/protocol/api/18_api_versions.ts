// ApiVersions (key 18), v0-3. v3 is flexible, but its response header is always v0 so that a
// client on any version can read the error and the supported ranges (see headers.ts).
import { api, message } from "../schema.ts";

export const ApiVersionsApi = api(
  message(18, "ApiVersionsRequest", "0-3", "3+", `
    clientSoftwareName     string  v3+
    clientSoftwareVersion  string  v3+
  `),
  message(18, "ApiVersionsResponse", "0-3", "3+", `
    errorCode       int16
    apiKeys         []
      apiKey        int16
      minVersion    int16
      maxVersion    int16
    throttleTimeMs  int32   v1+
    supportedFeatures  []  v3+  tag=0
      name          string
      minVersion    int16
      maxVersion    int16
    finalizedFeaturesEpoch  int64  v3+  tag=1  default=-1
    finalizedFeatures  []  v3+  tag=2
      name          string
      maxVersionLevel  int16
      minVersionLevel  int16
    zkMigrationReady  bool  v3+  tag=3
  `),
);
