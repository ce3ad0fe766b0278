// The authorizer's vocabulary, with Kafka's wire codes (org.apache.kafka.common.acl and
// org.apache.kafka.common.resource): these numbers travel in CreateAcls/DescribeAcls/DeleteAcls
// and in the authorized-operations bit sets of Metadata and DescribeGroups (bit n = operation n).

export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;
export type ResourceType = (typeof ResourceType)[keyof typeof ResourceType];

export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
} as const;
export type AclOperation = (typeof AclOperation)[keyof typeof AclOperation];

export const PatternType = {
  UNKNOWN: 0,
  ANY: 1,
  MATCH: 2,
  LITERAL: 3,
  PREFIXED: 4,
} as const;
export type PatternType = (typeof PatternType)[keyof typeof PatternType];

export const AclPermissionType = {
  UNKNOWN: 0,
  ANY: 1,
  DENY: 2,
  ALLOW: 3,
} as const;
export type AclPermissionType = (typeof AclPermissionType)[keyof typeof AclPermissionType];

/** Kafka's name for the one CLUSTER resource. */
export const clusterResourceName = "kafka-cluster";

/** Who sent a request: what an ACL is matched against. */
export interface RequestPrincipal {
  /** "User:<name>", or "User:ANONYMOUS" when nobody authenticated. */
  principal: string;
  /** The client's address, without the port (ACLs name hosts, or "*"). */
  host: string;
  /** The listener the request came in on. */
  listener: string;
  /** The request's API by Kafka's name ("Produce"), for the authorizer's audit log. */
  request?: string;
}

/**
 * The broker asks this before it acts (Kafka's Authorizer.authorize). Implementations answer from
 * memory: no await, so a handler's check and the action it guards stay in one turn.
 */
export interface Authorizer {
  /**
   * True when `who` may perform `operation` on the resource named `name` of `resourceType`.
   * `logIfDenied` false: the answer only filters (Metadata for all topics), so a denial is not
   * an attempt worth an audit line (Kafka's Action.logIfDenied).
   */
  authorize(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType, name: string, logIfDenied?: boolean): boolean;
  /**
   * The operations `who` may perform on the resource, as the bit set Metadata and DescribeGroups
   * return (bit n set = AclOperation n allowed), over the operations Kafka lists for that type.
   */
  authorizedOperations(who: RequestPrincipal, resourceType: ResourceType, name: string): number;
  /**
   * True when `who` may perform `operation` on at least one resource of `resourceType` that no
   * DENY covers (Kafka's Authorizer.authorizeByResourceType; InitProducerId asks it for WRITE
   * on any topic).
   */
  authorizeByResourceType(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType): boolean;
  /** Figures for /metrics (Kafka's authorizer-metrics), when the implementation keeps them. */
  metrics?(): AuthorizerMetrics;
}

/** Decisions of authorize() since start, and the ACLs held now. */
export interface AuthorizerMetrics {
  aclsTotal: number;
  allowedTotal: number;
  deniedTotal: number;
}
