// The page finds the site's own Client ID Metadata Document (web/app/oauth.js, written by build.py), in Node.
import assert from "node:assert/strict";
import { test } from "node:test";
import { siteClientMetadataUrl } from "../../web/app/oauth.js";

const SITE = "https://example.org/orizuru/";
const at = (href) => new URL(href);
const serving = (metadata, status = 200) => async () => ({ ok: status === 200, json: async () => metadata });
const document = (overrides = {}) => ({ client_id: `${SITE}oauth-client.json`, redirect_uris: [SITE], ...overrides });

test("the document beside the page is the client id when it names itself and the page", async () => {
  assert.equal(await siteClientMetadataUrl(at(SITE), serving(document())), `${SITE}oauth-client.json`);
});

test("no document, another client id, another redirect or plain http: none (dynamic registration)", async () => {
  assert.equal(await siteClientMetadataUrl(at(SITE), serving(null, 404)), undefined);
  assert.equal(await siteClientMetadataUrl(at(SITE), serving(document({ client_id: "https://evil.example/c" }))),
               undefined);
  assert.equal(await siteClientMetadataUrl(at(`${SITE}other.html`), serving(document())), undefined);
  assert.equal(await siteClientMetadataUrl(at("http://example.org/orizuru/"), serving(document())), undefined);
  assert.equal(await siteClientMetadataUrl(at(SITE), async () => { throw new TypeError("offline"); }), undefined);
});
