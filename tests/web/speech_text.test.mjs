// A reply's words as read aloud (web/render/speech_text.js), in Node: conversation mode reads each sentence as soon
// as it is whole, so where a sentence ends decides what is heard while the rest streams.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sentencesOf, speakable } from "../../web/render/speech_text.js";

test("whole sentences go, the unfinished rest waits for more", () => {
  assert.deepEqual(sentencesOf("It is London. Paris is"), { sentences: ["It is London."], rest: " Paris is" });
  // a full stop at the very end may be "3." of "3.14": it waits for what follows
  assert.deepEqual(sentencesOf("It is London."), { sentences: [], rest: "It is London." });
  assert.deepEqual(sentencesOf("東京です。大阪も！次"), { sentences: ["東京です。", "大阪も！"], rest: "次" });
});

test("a decimal point or an abbreviation's dot does not hold back the sentences after it", () => {
  // guards against the first cut, whose sentence could not hold a dot that no space follows
  assert.deepEqual(sentencesOf("Pi is 3.14 or so. Next"), { sentences: ["Pi is 3.14 or so."], rest: " Next" });
});

test("markdown's signs are not read out; code is named, links by their words", () => {
  assert.equal(speakable("## Title\n**Bold** and `x` [a link](https://example.com)", "(code)"),
               "Title\n Bold and x a link");
  assert.equal(speakable("Run:\n```py\nprint(1)\n```\nDone.", "(code)"), "Run:\n (code) \nDone.");
});
