// DeleteTopics (key 20), v1-6. v4 is flexible, v5 adds error messages, v6 names topics by name or
// id (topicNames is replaced by topics).
import { api, message } from "../schema.ts";

export const DeleteTopicsApi = api(
  message(20, "DeleteTopicsRequest", "1-6", "4+", `
    topics                  []      v6+
      name                  string  nullable  default=null
      topicId               uuid
    topicNames              []string  v1-5
    timeoutMs               int32
  `),
  message(20, "DeleteTopicsResponse", "1-6", "4+", `
    throttleTimeMs          int32
    responses               []
      name                  string  nullable v6+
      topicId               uuid    v6+
      errorCode             int16
      errorMessage          string  v5+  nullable  default=null
  `),
);
