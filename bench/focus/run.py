"""Prompt tokens per turn over a 200-turn conversation: focus memory vs the full history.

    .venv/bin/python bench/focus/run.py [--turns 200] [--budget 2000] [--window 3] [--seed 7]

The conversation is generated (seeded): a goal at turn 1, a new constraint every ~10 turns (20 in
all, one restated, one contradicting an earlier one), questions in between, assistant replies of
120-400 words. The classifier is pycore's scripted ``fake`` vendor answering through the real
classifier path (request, forced tool, parse, validation); it reports as usage the estimated size of
the request it received, so the classifier column is an estimate too.

Both prompt columns use the same estimate (:mod:`pycore.focus.tokens`): the full history is the
app's system prompt plus every earlier message plus the current one; focus memory is what
:func:`pycore.focus.synthesize` returns. Every turn checks that every constraint stated so far is
in the synthesized system prompt. No network; nothing is timed except synthesis itself.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

from pycore.adapters import get_adapter
from pycore.adapters.fake import FakeTransport
from pycore.client import ChatClient
from pycore.focus import Classifier, FocusState, estimate_prompt, estimate_tokens, synthesize, update_focus
from pycore.focus.classification import TOOL_NAME
from pycore.messages import ChatRequest, Message, ToolCallPart, Usage

SYSTEM = "You are a careful software engineer helping the user build their project."
GOAL = "Build a personal budgeting web app that works offline and syncs between a phone and a laptop."
RULES = [
    "Use TypeScript for the front end.", "No paid services.", "Data stays encrypted at rest.",
    "Support English and Japanese.", "Works without an account.", "Sync over the user's own cloud folder.",
    "Bundle size under 300 kB.", "No tracking or analytics.", "Accessible to screen readers.",
    "Dates in ISO 8601.", "Currency amounts as integer cents.", "Tests for every module.",
    "Dark mode follows the system setting.", "Import CSV from the two main banks.", "Undo for every delete.",
    "Keyboard shortcuts for the common actions.", "Runs on Safari 17 and later.", "Export to JSON and CSV.",
    "Use IndexedDB for storage.", "Store data in localStorage only.",  # the last contradicts the one before
]
CONTRADICTS = {len(RULES) - 1: len(RULES) - 2}  # rule index -> index of the rule it contradicts
FILLER = ("the component state reducer handles each action and the view renders the list while the sync "
          "worker merges remote changes and reports conflicts to the user").split()


def plan(turns: int, seed: int) -> list[tuple[str, dict]]:
    """(user message, classifier answer) per turn."""
    rng = random.Random(seed)
    rule_turns = {2 + round(i * (turns - 10) / len(RULES)): i for i in range(len(RULES))}
    restate_turn = turns // 2 + 3
    out = []
    for n in range(1, turns + 1):
        base = {"problem": "", "constraints": [], "decisions": [], "contradicts": []}
        if n == 1:
            out.append((f"I want to {GOAL[0].lower()}{GOAL[1:]}", {**base, "labels": ["PROBLEM_DEFINITION"],
                                                                   "reason": "states the goal", "problem": GOAL}))
        elif n in rule_turns:
            i = rule_turns[n]
            contradicts = [f"c{CONTRADICTS[i] + 1}"] if i in CONTRADICTS else []
            out.append((f"One more thing: {RULES[i].lower()}", {**base, "labels": ["CONSTRAINT_ADDITION"],
                        "reason": "adds a constraint", "constraints": [RULES[i]], "contradicts": contradicts}))
        elif n == restate_turn:
            out.append(("Again: no paid services, please.", {**base, "labels": ["CONSTRAINT_ADDITION"],
                        "reason": "restates", "constraints": ["No paid services"]}))
        else:
            words = " ".join(rng.choice(FILLER) for _ in range(rng.randint(10, 60)))
            out.append((f"How should {words}?", {**base, "labels": ["QUESTION"], "reason": "asks"}))
    return out


def reply(rng: random.Random) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(rng.randint(120, 400))) + "."


def classifier_turn(answer: dict):
    def respond(request: ChatRequest) -> list:
        size = estimate_prompt(request.system, request.messages)
        return [ToolCallPart(id="call", name=TOOL_NAME, arguments=answer), Usage(input_tokens=size, output_tokens=40)]
    return respond


async def run(turns: int, budget: int, window: int, seed: int) -> list[dict]:
    script = plan(turns, seed)
    transport = FakeTransport([classifier_turn(a) for _, a in script])
    classifier = Classifier(ChatClient(get_adapter("fake"), transport), "fake")
    rng = random.Random(seed + 1)
    state, history, rows, stated = FocusState(enabled=True, window=window), [], [], []
    for n, (user, answer) in enumerate(script, start=1):
        started = time.perf_counter()
        prompt = synthesize(state, user, base_system=SYSTEM, budget=budget)
        elapsed = time.perf_counter() - started
        stated += [rule.rstrip(".") for rule in answer["constraints"]]
        kept = sum(1 for rule in dict.fromkeys(stated) if _kept(rule, prompt.system + user))
        result = await update_focus(state, message_id=f"m{n}", text=user, reply=reply(rng), classifier=classifier)
        state = result.state
        rows.append({"turn": n, "full": estimate_prompt(SYSTEM, [*history, Message.user(user)]), "focus": prompt.tokens,
                     "classifier_in": result.cost.input_tokens, "classifier_out": result.cost.output_tokens,
                     "kept": kept, "stated": len(dict.fromkeys(stated)), "ms": elapsed * 1000})
        history += [Message.user(user), Message.assistant(state.turn[-1].assistant)]
    return rows


def _kept(rule: str, text: str) -> bool:
    return rule.rstrip(".").casefold() in text.casefold()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--window", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = asyncio.run(run(args.turns, args.budget, args.window, args.seed))
    marks = sorted({1, *range(50, args.turns + 1, 50), args.turns})
    print(f"prompt tokens per turn (estimated), budget {args.budget}, turn tier {args.window} exchanges")
    print(f"{'turn':>5} {'full history':>13} {'focus memory':>13} {'classifier in/out':>18} {'constraints kept':>17}")
    for row in (r for r in rows if r["turn"] in marks):
        print(f"{row['turn']:>5} {row['full']:>13,} {row['focus']:>13,} "
              f"{row['classifier_in']:>11,}/{row['classifier_out']:<6} {row['kept']:>8}/{row['stated']:<8}")
    lost = [r["turn"] for r in rows if r["kept"] != r["stated"]]
    print(f"max focus prompt: {max(r['focus'] for r in rows):,} tokens; full history at turn {args.turns}: "
          f"{rows[-1]['full']:,}; turns that lost a constraint: {lost or 'none'}")
    print(f"classifier total: {sum(r['classifier_in'] for r in rows):,} in / "
          f"{sum(r['classifier_out'] for r in rows):,} out over {len(rows)} calls; "
          f"synthesis median {statistics.median(r['ms'] for r in rows):.2f} ms/turn")
    print(f"(estimate: {estimate_tokens('x' * 4)} token per 4 ASCII chars, 1 per CJK char; see pycore/focus/tokens.py)")


if __name__ == "__main__":
    main()
