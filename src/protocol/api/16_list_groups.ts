// ListGroups (key 16), v0-5. v1 adds throttle time, v3 is flexible, v4 filters by state (and
// answers each group's state), v5 filters by type (and answers each group's type).
import { api, message } from "../schema.ts";

export const ListGroupsApi = api(
  message(16, "ListGroupsRequest", "0-5", "3+", `
    statesFilter          []string  v4+     // empty: every state
    typesFilter           []string  v5+     // empty: every type
  `),
  message(16, "ListGroupsResponse", "0-5", "3+", `
    throttleTimeMs        int32   v1+
    errorCode             int16
    groups                []
      groupId             string
      protocolType        string
      groupState          string  v4+
      groupType           string  v5+     // "classic" or "consumer"
  `),
);
