# kafka-python's KafkaAdminClient ACL calls against a broker (argv: bootstrap): create_acls
# (literal and prefixed), describe_acls with ANY and MATCH filters, delete_acls; prints one
# JSON line with what each call returned.
import json
import sys

from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

bootstrap = sys.argv[1]
out = {"client": "kafka-python", "errors": []}
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="strand-acl-test", request_timeout_ms=30000)
try:
    acls = [
        ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, "py-orders")),
        ACL("User:bob", "10.0.0.1", ACLOperation.WRITE, ACLPermissionType.DENY,
            ResourcePattern(ResourceType.TOPIC, "py-", ACLResourcePatternType.PREFIXED)),
        ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.GROUP, "py-group")),
    ]
    created = admin.create_acls(acls)
    out["created"] = len(created["succeeded"])
    out["createFailed"] = [str(f) for f in created["failed"]]

    everything = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                           ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
    described, err = admin.describe_acls(everything)
    out["describeError"] = err.__name__ if isinstance(err, type) else type(err).__name__
    out["described"] = sorted(
        [a.resource_pattern.resource_name, a.resource_pattern.pattern_type.name, a.principal, a.host, a.operation.name, a.permission_type.name]
        for a in described
    )
    matched, _ = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                               ResourcePatternFilter(ResourceType.TOPIC, "py-orders", ACLResourcePatternType.MATCH)))
    out["matched"] = sorted(a.resource_pattern.resource_name for a in matched)

    deleted = admin.delete_acls([ACLFilter("User:bob", None, ACLOperation.ANY, ACLPermissionType.ANY,
                                           ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))])
    out["deleted"] = [[acl.principal, acl.resource_pattern.resource_name, err.__name__]
                      for (_, matches, _) in deleted for (acl, err) in matches]
    left, _ = admin.describe_acls(everything)
    out["left"] = sorted(a.resource_pattern.resource_name for a in left)
except Exception as e:  # reported, not raised: the test shows it
    out["errors"].append(repr(e))
finally:
    admin.close()
print(json.dumps(out))
