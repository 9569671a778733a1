// The policy an MCP App view runs under (web/mcp_app/policy.js), in Node: which declared hosts a view keeps.
import assert from "node:assert/strict";
import { test } from "node:test";
import { viewPolicy } from "../../web/mcp_app/policy.js";

const declared = ["http://127.0.0.1:*", "http://localhost:8080", "https://dev.localhost", "https://10.0.0.8",
                  "https://192.168.1.20:8443", "https://172.20.0.1", "https://169.254.169.254", "https://100.64.0.1",
                  "https://printer.local", "https://db.internal", "https://8.8.8.8", "https://api.example.com",
                  "wss://*.example.com"];

test("T-W11: a view of a server elsewhere keeps public hosts only; loopback and private ones are named", () => {
  const { policy, unreachable, refused } = viewPolicy({ connectDomains: declared });
  assert.deepEqual(unreachable, declared.slice(0, 10));
  assert.deepEqual(refused, []);
  assert.match(policy, /connect-src https:\/\/8\.8\.8\.8 https:\/\/api\.example\.com wss:\/\/\*\.example\.com;/);
});

test("a view of a server on this machine keeps loopback and private hosts", () => {
  const { policy, unreachable } = viewPolicy({ connectDomains: declared }, { local: true });
  assert.deepEqual(unreachable, []);
  assert.match(policy, /connect-src http:\/\/127\.0\.0\.1:\* http:\/\/localhost:8080 /);
});

test("T-W11: a wildcard over a top-level domain or a shared second level is refused for every view", () => {
  const wide = ["https://*.com", "https://*.co.uk", "https://*.com.au", "https://*.ne.jp", "https://*.1.2.3"];
  for (const local of [true, false]) {
    const { refused, granted } = viewPolicy({ resourceDomains: [...wide, "https://*.example.co.uk"] }, { local });
    assert.deepEqual(refused, wide);
    assert.deepEqual(granted.resourceDomains, ["https://*.example.co.uk"]);
  }
});
