// The authorizer (Kafka's AclAuthorizer): who may do what to which topic, group, cluster or
// transactional id. The broker holds at most one Authorizer (null when `authorizer.class.name`
// is unset, and then every request a listener accepts is allowed, except the inter-broker APIs,
// which the broker gates on its own).
//
// Invariant: authorize() answers from memory and never awaits, so a handler checks and acts in
// one turn of the event loop.
export * from "./types.ts";
export * from "./acl.ts";
export { AclAuthorizer, aclChangeExpirationMs, authorizerLoggerName, type AclDeleteResult, type AclResult, type AclStore, aclStoreOf } from "./acl_authorizer.ts";
