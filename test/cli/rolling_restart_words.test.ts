// How `strand cluster rolling-restart` turns its --restart-command template into the words it runs
// (no shell): split as a POSIX shell splits words, then {id}, {host} and {port} filled in inside
// each word, so a value can never become shell syntax or a second word; a host that is not a
// plain name or address (one that would pass for an option, or carries spaces or quotes) is refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import { commandFor, splitWords } from "../../src/cli/rolling_restart.ts";
import { UsageError } from "../../src/cli/tool.ts";

test("rolling-restart command: shell-like word splitting, placeholders filled per word", () => {
  const b = { id: 2, host: "kafka-2.example", port: 9092 };
  assert.deepEqual(commandFor(splitWords("ssh {host} sudo systemctl restart strand@{id}"), b), ["ssh", "kafka-2.example", "sudo", "systemctl", "restart", "strand@2"]);
  assert.deepEqual(splitWords(`sh -c 'systemctl restart "strand@{id}"; echo done'`), ["sh", "-c", `systemctl restart "strand@{id}"; echo done`]);
  assert.deepEqual(splitWords(`a "b c" d\\ e "x\\"y" '' "" end`), ["a", "b c", "d e", 'x"y', "", "", "end"]);
  assert.deepEqual(splitWords("  lead   trail  "), ["lead", "trail"]);
  assert.deepEqual(commandFor(splitWords("restart --host={host}:{port} {id}{id}"), b), ["restart", "--host=kafka-2.example:9092", "22"]);
  assert.deepEqual(commandFor(["x", "{host}"], { id: 0, host: "::1", port: 1 }), ["x", "::1"]);
  for (const bad of ["'open", '"open', "", "   "]) assert.throws(() => splitWords(bad), UsageError, JSON.stringify(bad));
});

test("rolling-restart command: a host that is not a plain name or address is refused", () => {
  for (const host of ["-oProxyCommand=touch /tmp/x", "a b", "a;reboot", "$(id)", "a'b", "", "host\n"]) {
    assert.throws(() => commandFor(["ssh", "{host}"], { id: 1, host, port: 9092 }), /is not a plain host name or address/, JSON.stringify(host));
  }
});
