"""A scripted 200-turn conversation: what the user says, what the assistant replies, and what the
classifier answers (in a given vendor's wire format, faults included) at each turn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import focus_scripts as fs

from pycore.http.replay import Recording

TURNS = 200
PROBLEM = "Plan a 10-day family trip to Japan in April for two adults and two children."
REDEFINED = "Plan a 12-day family trip to Japan and South Korea in April for two adults and two children."
BUDGET = "Total budget under 6000 EUR, flights included."
FLIGHT = "No flight longer than 12 hours."
DIRECT = "Direct flights only, even if longer than 12 hours."
# turn -> (user message, constraint the classifier reports)
CONSTRAINTS: dict[int, tuple[str, str]] = {
    2: ("Keep the whole thing under 6000 EUR, flights included.", BUDGET),
    9: ("We don't want to change hotels more than twice.", "No more than two hotel changes."),
    23: ("The kids need to be in bed by 9 pm every night.", "Children in bed by 9 pm."),
    37: ("Please, no flight longer than 12 hours.", FLIGHT),
    58: ("My partner is vegetarian, plan meals around that.", "Vegetarian meals for one adult."),
    81: ("We need a rest day at least every three days.", "A rest day at least every three days."),
    104: ("We must spend at least three days in Kyoto.", "At least three days in Kyoto."),
    163: ("Only trains inside Japan, no domestic flights.", "Trains only within Japan, no domestic flights."),
}
CONTRADICTION_TURN = 140  # contradicts turn 37's constraint
REPEAT_TURN = 120  # says the budget again
REDEFINE_TURN = 150
DECISION_TURN = 185
DECISION = "Stay in a ryokan while in Kyoto."
# turn -> faults served before (or instead of) the valid answer
FAULTS: dict[int, list[str]] = {
    30: ["not_json"],  # retried, then fine
    45: ["wrong_labels", "wrong_labels"],  # UNCLEAR
    60: ["rate_limited"],  # retried, then fine
    75: ["server_error", "server_error"],  # UNCLEAR
    81: ["rate_limited"],  # a constraint turn: the retry still captures it
    90: ["empty"],
    110: ["empty", "not_json"],  # UNCLEAR
}
FAILED_TURNS = {t for t, faults in FAULTS.items() if len(faults) == 2}


@dataclass
class Turn:
    number: int
    user: str
    reply: str
    answer: dict[str, Any]
    faults: list[str] = field(default_factory=list)


def _answer(labels: list[str], reason: str, **fields: Any) -> dict[str, Any]:
    return {"labels": labels, "reason": reason, "problem": fields.get("problem", ""),
            "constraints": fields.get("constraints", []), "decisions": fields.get("decisions", []),
            "contradicts": fields.get("contradicts", [])}


def reply_text(n: int) -> str:
    """A reply of 60-200 words, different at every turn."""
    words = 60 + (n * 37) % 141
    return " ".join(f"day{(n + i) % 12}-note{i}" if i % 7 == 0 else "itinerary" for i in range(words)) + "."


def turn(n: int, flight_id: str) -> Turn:
    if n == 1:
        answer = _answer(["PROBLEM_DEFINITION"], "states the goal", problem=PROBLEM)
        user = "I want to plan a 10-day family trip to Japan in April, two adults and two kids."
    elif n in CONSTRAINTS:
        user, constraint = CONSTRAINTS[n]
        answer = _answer(["CONSTRAINT_ADDITION"], "adds a limit", constraints=[constraint])
    elif n == REPEAT_TURN:
        user = "Remember, the budget is 6000 EUR total with flights."
        answer = _answer(["CONSTRAINT_ADDITION"], "repeats the budget",
                         constraints=["Total budget under 6000 EUR, flights included"])
    elif n == CONTRADICTION_TURN:
        user = "Actually, direct flights only, even if that means more than 12 hours."
        answer = _answer(["CONSTRAINT_ADDITION", "REFINEMENT"], "changes the flight rule", constraints=[DIRECT],
                         contradicts=[flight_id])
    elif n == REDEFINE_TURN:
        user = "Let's change the plan: 12 days, and add South Korea."
        answer = _answer(["PROBLEM_DEFINITION"], "redefines the trip", problem=REDEFINED)
    elif n == DECISION_TURN:
        user = "OK, let's do the ryokan in Kyoto."
        answer = _answer(["REFINEMENT"], "decides lodging", decisions=[DECISION])
    else:
        user = f"What should we do on day {n % 12 + 1}? (question {n})"
        answer = _answer(["QUESTION"], "asks about the itinerary")
    return Turn(n, user, reply_text(n), answer, FAULTS.get(n, []))


def conversation(flight_id: str = "c4") -> list[Turn]:
    """``flight_id``: the id the 12-hour rule gets (the 4th constraint stated)."""
    return [turn(n, flight_id) for n in range(1, TURNS + 1)]


def recordings(vendor: str, turns: list[Turn]) -> list[Recording]:
    """What the vendor sends, in order: each turn's faults, then (unless both attempts failed) the answer."""
    faults: dict[str, Callable[[str], Recording]] = {
        "not_json": fs.not_json,
        "empty": fs.empty,
        "rate_limited": fs.rate_limited,
        "server_error": fs.server_error,
        "wrong_labels": lambda v: fs.answer(v, _answer(["GREETING"], "not a label")),
    }
    out: list[Recording] = []
    for t in turns:
        out += [faults[f](vendor) for f in t.faults]
        if len(t.faults) < 2:
            out.append(fs.answer(vendor, t.answer, usage=(280 + t.number, 35 + t.number % 10)))
    return out
