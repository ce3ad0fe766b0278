# librdkafka's ACL admin calls (rd_kafka_CreateAcls, rd_kafka_DescribeAcls, rd_kafka_DeleteAcls)
# against a broker (argv: bootstrap), through ctypes on the system's librdkafka (the library
# confluent-kafka-python wraps; Debian's python3-confluent-kafka 1.7 predates its ACL methods).
# Prints one JSON line with what each call returned.
import ctypes
import json
import sys

lib = ctypes.CDLL("librdkafka.so.1")
P = ctypes.c_void_p
lib.rd_kafka_conf_new.restype = P
lib.rd_kafka_conf_set.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
lib.rd_kafka_new.restype = P
lib.rd_kafka_new.argtypes = [ctypes.c_int, P, ctypes.c_char_p, ctypes.c_size_t]
lib.rd_kafka_queue_new.restype = P
lib.rd_kafka_queue_new.argtypes = [P]
for fn in ("rd_kafka_AclBinding_new", "rd_kafka_AclBindingFilter_new"):
    f = getattr(lib, fn)
    f.restype = P
    f.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
lib.rd_kafka_CreateAcls.argtypes = [P, ctypes.POINTER(P), ctypes.c_size_t, P, P]
lib.rd_kafka_DeleteAcls.argtypes = [P, ctypes.POINTER(P), ctypes.c_size_t, P, P]
lib.rd_kafka_DescribeAcls.argtypes = [P, P, P, P]
lib.rd_kafka_queue_poll.restype = P
lib.rd_kafka_queue_poll.argtypes = [P, ctypes.c_int]
lib.rd_kafka_event_error.argtypes = [P]
lib.rd_kafka_event_error_string.restype = ctypes.c_char_p
lib.rd_kafka_event_error_string.argtypes = [P]
for fn in ("rd_kafka_event_CreateAcls_result", "rd_kafka_event_DescribeAcls_result", "rd_kafka_event_DeleteAcls_result"):
    getattr(lib, fn).restype = P
    getattr(lib, fn).argtypes = [P]
for fn in ("rd_kafka_CreateAcls_result_acls", "rd_kafka_DescribeAcls_result_acls", "rd_kafka_DeleteAcls_result_responses",
           "rd_kafka_DeleteAcls_result_response_matching_acls"):
    getattr(lib, fn).restype = ctypes.POINTER(P)
    getattr(lib, fn).argtypes = [P, ctypes.POINTER(ctypes.c_size_t)]
for fn in ("rd_kafka_acl_result_error", "rd_kafka_DeleteAcls_result_response_error"):
    getattr(lib, fn).restype = P
    getattr(lib, fn).argtypes = [P]
lib.rd_kafka_error_code.argtypes = [P]
lib.rd_kafka_error_string.restype = ctypes.c_char_p
lib.rd_kafka_error_string.argtypes = [P]
for fn in ("rd_kafka_AclBinding_name", "rd_kafka_AclBinding_principal", "rd_kafka_AclBinding_host"):
    getattr(lib, fn).restype = ctypes.c_char_p
    getattr(lib, fn).argtypes = [P]
for fn in ("rd_kafka_AclBinding_restype", "rd_kafka_AclBinding_resource_pattern_type", "rd_kafka_AclBinding_operation",
           "rd_kafka_AclBinding_permission_type"):
    getattr(lib, fn).argtypes = [P]
lib.rd_kafka_event_destroy.argtypes = [P]
lib.rd_kafka_queue_destroy.argtypes = [P]
lib.rd_kafka_destroy.argtypes = [P]

TOPIC, GROUP, ANY = 2, 3, 1
LITERAL, PREFIXED, MATCH = 3, 4, 2
READ, WRITE, OP_ANY = 3, 4, 1
DENY, ALLOW, PERM_ANY = 2, 3, 1

errstr = ctypes.create_string_buffer(512)
out = {"client": "librdkafka", "errors": []}


def b(s):
    return None if s is None else s.encode()


def binding(fn, restype, name, pattern, principal, host, op, perm):
    p = getattr(lib, fn)(restype, b(name), pattern, b(principal), b(host), op, perm, errstr, 512)
    if not p:
        raise RuntimeError(f"{fn}: {errstr.value.decode()}")
    return p


def view(acl):
    return [lib.rd_kafka_AclBinding_restype(acl), lib.rd_kafka_AclBinding_name(acl).decode(),
            lib.rd_kafka_AclBinding_resource_pattern_type(acl), lib.rd_kafka_AclBinding_principal(acl).decode(),
            lib.rd_kafka_AclBinding_host(acl).decode(), lib.rd_kafka_AclBinding_operation(acl),
            lib.rd_kafka_AclBinding_permission_type(acl)]


def wait(queue):
    ev = lib.rd_kafka_queue_poll(queue, 30000)
    if not ev:
        raise RuntimeError("no result within 30 s")
    if lib.rd_kafka_event_error(ev) != 0:
        msg = lib.rd_kafka_event_error_string(ev)
        lib.rd_kafka_event_destroy(ev)
        raise RuntimeError(f"request failed: {msg.decode() if msg else '?'}")
    return ev


conf = lib.rd_kafka_conf_new()
lib.rd_kafka_conf_set(conf, b"bootstrap.servers", sys.argv[1].encode(), errstr, 512)
rk = lib.rd_kafka_new(0, conf, errstr, 512)
queue = lib.rd_kafka_queue_new(rk)
try:
    acls = [
        binding("rd_kafka_AclBinding_new", TOPIC, "rd-orders", LITERAL, "User:alice", "*", READ, ALLOW),
        binding("rd_kafka_AclBinding_new", TOPIC, "rd-", PREFIXED, "User:bob", "10.0.0.1", WRITE, DENY),
        binding("rd_kafka_AclBinding_new", GROUP, "rd-group", LITERAL, "User:alice", "*", READ, ALLOW),
    ]
    arr = (P * len(acls))(*acls)
    lib.rd_kafka_CreateAcls(rk, arr, len(acls), None, queue)
    ev = wait(queue)
    cnt = ctypes.c_size_t()
    results = lib.rd_kafka_CreateAcls_result_acls(lib.rd_kafka_event_CreateAcls_result(ev), ctypes.byref(cnt))
    out["created"] = [0 if not lib.rd_kafka_acl_result_error(results[i]) else lib.rd_kafka_error_code(lib.rd_kafka_acl_result_error(results[i]))
                      for i in range(cnt.value)]
    lib.rd_kafka_event_destroy(ev)

    def describe(flt):
        lib.rd_kafka_DescribeAcls(rk, flt, None, queue)
        ev = wait(queue)
        n = ctypes.c_size_t()
        found = lib.rd_kafka_DescribeAcls_result_acls(lib.rd_kafka_event_DescribeAcls_result(ev), ctypes.byref(n))
        rows = sorted(view(found[i]) for i in range(n.value))
        lib.rd_kafka_event_destroy(ev)
        return rows

    out["described"] = describe(binding("rd_kafka_AclBindingFilter_new", ANY, None, 1, None, None, OP_ANY, PERM_ANY))
    out["matched"] = describe(binding("rd_kafka_AclBindingFilter_new", TOPIC, "rd-orders", MATCH, None, None, OP_ANY, PERM_ANY))

    flt = binding("rd_kafka_AclBindingFilter_new", ANY, None, 1, "User:alice", None, OP_ANY, PERM_ANY)
    farr = (P * 1)(flt)
    lib.rd_kafka_DeleteAcls(rk, farr, 1, None, queue)
    ev = wait(queue)
    n = ctypes.c_size_t()
    responses = lib.rd_kafka_DeleteAcls_result_responses(lib.rd_kafka_event_DeleteAcls_result(ev), ctypes.byref(n))
    deleted = []
    for i in range(n.value):
        err = lib.rd_kafka_DeleteAcls_result_response_error(responses[i])
        if err:
            out["errors"].append(lib.rd_kafka_error_string(err).decode())
        m = ctypes.c_size_t()
        matching = lib.rd_kafka_DeleteAcls_result_response_matching_acls(responses[i], ctypes.byref(m))
        deleted += [view(matching[j]) for j in range(m.value)]
    out["deleted"] = sorted(deleted)
    lib.rd_kafka_event_destroy(ev)
    out["left"] = describe(binding("rd_kafka_AclBindingFilter_new", ANY, None, 1, None, None, OP_ANY, PERM_ANY))
except Exception as e:  # reported, not raised: the test shows it
    out["errors"].append(repr(e))
finally:
    lib.rd_kafka_queue_destroy(queue)
    lib.rd_kafka_destroy(rk)
print(json.dumps(out))
