"""A token estimate without any vendor's tokenizer (none of them runs in the browser for free).

Rule, from how BPE tokenizers (OpenAI o200k/cl100k, Claude's, Gemini's SentencePiece) split text:

- ASCII text: 1 token per 4 characters (English prose runs 4-4.5 on all of them; code about 3.5);
- CJK ideographs, kana, hangul and full-width forms: 1 token per character (o200k is nearer 0.7,
  Claude nearer 1.1, so 1 is in the middle and errs high for OpenAI);
- other non-ASCII letters (accents, Cyrillic, Greek...): 1 token per 2 characters;
- 4 tokens of framing per message (role and separators), as OpenAI documents for chat formats.

It is for a budget, not a bill: what the vendor counts is reported back as usage and shown as is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from pycore.messages import Message, TextPart

MESSAGE_OVERHEAD = 4
_WIDE = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7af"  # Hangul Jamo, CJK and kana, Hangul
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]"  # compatibility, full width, CJK ext.
)


def estimate_tokens(text: str) -> int:
    if text.isascii():
        return math.ceil(len(text) / 4)
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    wide = len(_WIDE.findall(text))
    other = len(text) - ascii_chars - wide
    return math.ceil(ascii_chars / 4 + wide + other / 2)


def message_text(message: Message) -> str:
    return "".join(part.text for part in message.parts if isinstance(part, TextPart))


def estimate_prompt(system: str | None, messages: Iterable[Message]) -> int:
    """The estimate for a whole request: system prompt plus each message with its framing."""
    total = estimate_tokens(system) + MESSAGE_OVERHEAD if system else 0
    for message in messages:
        total += estimate_tokens(message_text(message)) + MESSAGE_OVERHEAD
    return total
