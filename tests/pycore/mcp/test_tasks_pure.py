"""Following a task (pycore.mcp.tasks), with no network: the server's answers are scripted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pycore.mcp.errors import MCPProtocolError, MCPRPCError
from pycore.mcp.tasks import follow

pytestmark = pytest.mark.pyodide


class Script:
    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.updates: list[dict[str, Any]] = []
        self.cancelled: list[str] = []
        self.asked: list[str] = []
        self.reports: list[tuple[str, str | None]] = []

    async def get(self, task_id: str) -> dict[str, Any]:
        return {"taskId": task_id, "pollIntervalMs": 1, **self.answers.pop(0)}

    async def update(self, task_id: str, responses: dict[str, Any]) -> None:
        self.updates.append(responses)

    async def answer(self, key: str, request: Any) -> dict[str, Any]:
        self.asked.append(key)
        return {"action": "accept", "content": {"ok": True}}

    async def run(self, **created: Any) -> dict[str, Any]:
        return await follow({"resultType": "task", "taskId": "t1", "status": "working", "pollIntervalMs": 1,
                             **created}, url="https://mcp.test/mcp", get=self.get, update=self.update,
                            cancel=self.cancelled.append, answer=self.answer,
                            report=lambda status, message: self.reports.append((status, message)))


DONE = {"status": "completed", "result": {"content": [{"type": "text", "text": "done"}]}}
ASKING = {"status": "input_required", "inputRequests": {"a": {"method": "elicitation/create", "params": {}}}}


async def test_each_question_is_answered_once_even_while_the_server_still_shows_it() -> None:
    script = Script({"status": "working", "statusMessage": "half way"}, ASKING, ASKING, DONE)
    assert await script.run() == DONE["result"]
    assert script.asked == ["a"] and script.updates == [{"a": {"action": "accept", "content": {"ok": True}}}]
    assert script.reports == [("working", None), ("working", "half way"), ("input_required", None),
                              ("input_required", None)]


@pytest.mark.parametrize(("answer", "error", "match"), [
    ({"status": "failed", "error": {"code": -32000, "message": "disk full"}}, MCPRPCError, "disk full"),
    ({"status": "failed"}, MCPRPCError, "the task failed"),
    ({"status": "cancelled"}, MCPRPCError, "the server cancelled the task"),
    ({"status": "completed"}, MCPProtocolError, "without its result"),
    ({"status": "paused"}, MCPProtocolError, "the status 'paused'"),
    ({"status": "working", "taskId": "t2"}, MCPProtocolError, "answered for task 't2'"),
])
async def test_a_task_that_does_not_complete_is_an_error_that_says_why(
        answer: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        await Script(answer).run()


async def test_a_task_without_an_id_is_refused_and_a_stopped_one_is_cancelled() -> None:
    with pytest.raises(MCPProtocolError, match="no taskId"):
        await Script().run(taskId="")
    script = Script(*[{"status": "working"}] * 1000)
    running = asyncio.ensure_future(script.run())
    await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert script.cancelled == ["t1"]
