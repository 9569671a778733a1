"""A fixed set of conversations for the request builders (stdlib + pycore only: also used in Pyodide).

Transcripts "from <vendor>" are real recorded responses parsed by that vendor's adapter, followed by
the tool results, so each continues on every other vendor exactly as the app would send it.
"""

from __future__ import annotations

from vendor_fixtures import VENDORS_DIR

from pycore.messages import (
    ChatRequest,
    DocumentPart,
    ImagePart,
    Message,
    NamedToolChoice,
    Reasoning,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
)
from pycore.replay import replay

# A 1x1 transparent PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city.",
    inputSchema={
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "units": {"anyOf": [{"$ref": "#/$defs/Units"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
        "additionalProperties": False,
        "$defs": {"Units": {"type": "string", "enum": ["c", "f"]}},
    },
)
TIME = Tool(
    name="get_time",
    description="Current time in a timezone.",
    inputSchema={"type": "object", "properties": {"tz": {"type": ["string", "null"]}}, "required": []},
)

TRANSCRIPTS = {
    "openai": ("openai", "openai/chat-stream-parallel-tools.sse"),
    "openai-responses": ("openai-responses", "openai/responses-stream-reasoning-summary.sse"),
    "anthropic": ("anthropic", "anthropic/message-parallel-tool-use.json"),
    "anthropic-thinking": ("anthropic", "anthropic/stream-thinking-signature.sse"),
    "gemini": ("gemini", "gemini/stream-function-call-gemini3.sse"),
    "ollama": ("ollama", "ollama/chat-nonstream-tool-call-thinking.json"),
}


def recorded_turn(vendor: str, file: str) -> Message:
    return replay(vendor, (VENDORS_DIR / file).read_bytes()).message


def results_for(message: Message) -> Message:
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    parts = [ToolResultPart(call_id=c.id, content=[TextPart(text=f"result of {c.name}")]) for c in calls]
    return Message(role="user", parts=parts or [TextPart(text="Go on.")])


def transcript(name: str) -> ChatRequest:
    vendor, file = TRANSCRIPTS[name]
    turn = recorded_turn(vendor, file)
    messages = [Message.user("Please help."), turn, results_for(turn)]
    return ChatRequest(model="some-model", messages=messages, tools=[WEATHER, TIME], system="Be brief.")


def text() -> ChatRequest:
    return ChatRequest(
        model="some-model",
        system="You are terse.",
        temperature=0.2,
        max_tokens=256,
        messages=[Message.user("Hello"), Message.assistant("Hi."), Message.user("Count to 3.")],
    )


def assistant(effort: bool) -> ChatRequest:
    """An assistant's settings (system prompt, temperature, max output tokens, reasoning) on a first turn:
    given as an effort (how the OpenAI APIs take it) or as a thinking budget (Anthropic, Gemini)."""
    return ChatRequest(
        model="some-model",
        system="You are a careful statistician. Show your working.",
        temperature=0.7,
        max_tokens=12000,
        reasoning=Reasoning(effort="medium") if effort else Reasoning(budget_tokens=4096),
        messages=[Message.user("Is a sample of 30 enough?")],
    )


DOCUMENTS = VENDORS_DIR.parent / "documents"


def documents() -> ChatRequest:
    """A CSV (its text, under its name) and a PDF (its bytes and the text a PDF reader extracted) in one turn."""
    csv = (DOCUMENTS / "sales.csv").read_text("utf-8")
    return ChatRequest(
        model="some-model",
        messages=[Message(role="user", parts=[
            TextPart(text="Which city sold most, and does the report agree?"),
            DocumentPart(name="sales.csv", mime_type="text/csv", text=csv),
            DocumentPart(name="report.pdf", mime_type="application/pdf", data=(DOCUMENTS / "sample.pdf").read_bytes(),
                         text="Quarterly sales report\nTotal revenue: 4,210 units in Q3"),
        ])],
    )


def images() -> ChatRequest:
    image = ImagePart(data=PNG, mime_type="image/png")
    return ChatRequest(
        model="some-model", messages=[Message(role="user", parts=[TextPart(text="What is this?"), image])]
    )


def parallel_tool_calls() -> ChatRequest:
    calls = [
        ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"}),
        ToolCallPart(id="call_2", name="get_time", arguments={"tz": "Europe/Paris"}),
    ]
    results = [
        ToolResultPart(call_id="call_1", content=[TextPart(text="18C, cloudy")]),
        ToolResultPart(call_id="call_2", content=[TextPart(text="14:05")]),
    ]
    return ChatRequest(
        model="some-model",
        tools=[WEATHER, TIME],
        tool_choice="auto",
        messages=[
            Message.user("Weather and time in Paris?"),
            Message(role="assistant", parts=[TextPart(text="Checking both."), *calls]),
            Message(role="user", parts=results),
        ],
    )


def tool_error() -> ChatRequest:
    call = ToolCallPart(id="call_9", name="get_weather", arguments={"city": "Atlantis"})
    result = ToolResultPart(
        call_id="call_9",
        is_error=True,
        content=[TextPart(text="unknown city"), ImagePart(data=PNG, mime_type="image/png")],
    )
    return ChatRequest(
        model="some-model",
        tools=[WEATHER],
        tool_choice=NamedToolChoice(name="get_weather"),
        messages=[
            Message.user("Weather in Atlantis?"),
            Message(role="assistant", parts=[call]),
            Message(role="user", parts=[result]),
        ],
    )


def all_conversations() -> dict[str, ChatRequest]:
    out = {"text": text(), "assistant-effort": assistant(True), "assistant-budget": assistant(False),
           "images": images(), "documents": documents(), "parallel-tool-calls": parallel_tool_calls(),
           "tool-error": tool_error()}
    out.update({f"from-{name}": transcript(name) for name in TRANSCRIPTS})
    return out
