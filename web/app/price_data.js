/**
 * The price list, as its own chunk: @pydantic/genai-prices (pinned by package-lock.json, so the build that bumps the
 * lock updates the prices and context windows) re-exported with only what web/app/prices.js uses. Imported lazily
 * (`import("./price_data.js")`), so its ~800 KB of data is fetched the first time a cost is shown, not at boot.
 *
 * Only calcPrice: never updatePrices or REMOTE_DATA_JSON_URL (the package's remote update from GitHub). The page
 * loads nothing from hosts the user did not choose, and with nothing here naming them esbuild leaves that code and
 * its URL out of the chunk (tests/e2e/test_journeys_costs.py checks both).
 */

export { calcPrice } from "@pydantic/genai-prices";
