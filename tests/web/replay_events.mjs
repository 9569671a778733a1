// The page's reducer (web/store/reduce.js) over lists of the core's stream events, in Node: each line of stdin's
// JSON list [[events], ...] becomes the parts the page builds, printed as one JSON list (tests/web/test_reducer_parity.py).
import { readFileSync } from "node:fs";
import { replayEvents } from "../../web/store/reduce.js";

const runs = JSON.parse(readFileSync(0, "utf-8"));
process.stdout.write(JSON.stringify(runs.map((events) => replayEvents(events).parts)));
