"""``audio.transcribe {provider, audio, mime_type, chat_model} -> {text}`` and ``audio.speech {provider, text, voice?,
speed?} -> {audio, mime_type}``: the vendor's speech-to-text and voice, with the profile's key (the page's dictation
where the browser has no speech recognition of its own, and "Read aloud" with the vendor's voice)."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from pycore.contract.params import SpeechParams, TranscribeParams
from pycore.contract.results import SpeechResult, TranscriptResult
from pycore.methods._provider import make_client
from pycore.methods._registry import Emit, method

if TYPE_CHECKING:
    from pycore.methods._state import WorkerState


@method("audio.transcribe", params=TranscribeParams, result=TranscriptResult)
async def transcribe(params: TranscribeParams, emit: Emit, worker: WorkerState) -> TranscriptResult:
    try:
        audio = base64.b64decode(params.audio, validate=True)
    except binascii.Error as e:
        raise ValueError("audio must be the clip's bytes in base64") from e
    client = make_client(params.provider, worker)
    try:
        text = await client.transcribe(audio, params.mime_type, chat_model=params.chat_model, model=params.model,
                                       language=params.language)
    finally:
        await client.transport.aclose()
    return TranscriptResult(text=text)


@method("audio.speech", params=SpeechParams, result=SpeechResult)
async def speech(params: SpeechParams, emit: Emit, worker: WorkerState) -> SpeechResult:
    client = make_client(params.provider, worker)
    try:
        audio, mime_type = await client.speak(params.text, voice=params.voice, speed=params.speed, model=params.model)
    finally:
        await client.transport.aclose()
    return SpeechResult(audio=base64.b64encode(audio).decode("ascii"), mime_type=mime_type)
