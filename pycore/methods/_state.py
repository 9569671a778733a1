"""What the worker keeps between calls, in one object: :class:`WorkerState`, handed to every method.

One page talks to one worker, so there is one state (:data:`STATE`), made by :mod:`pycore.wire` when it
runs a method. Nothing else in :mod:`pycore.methods` keeps anything at module level.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pycore.agent.pending import Pending

if TYPE_CHECKING:
    from pycore.client import ChatClient
    from pycore.http import Transport
    from pycore.mcp.dpop import DPoPKeys
    from pycore.mcp.oauth import OAuthClient
    from pycore.mcp.oauth_vault import Vault
    from pycore.methods._registry import Emit
    from pycore.methods.mcp import Connection


@dataclass
class ActiveRun:
    """A chat.run going on: where its events go, and the model a server's sampling request would use."""

    emit: Emit
    client: ChatClient
    model: str
    sampling_max_tokens: int
    sampling_max_input_chars: int = 100_000


@dataclass
class WorkerState:
    # mcp.connect: the MCP servers the page connected, by the page's server id
    connections: dict[str, Connection] = field(default_factory=dict)
    # chat.approve and chat.page_tool_result answer what a running chat.run waits for
    approvals: Pending = field(default_factory=lambda: Pending("approval"))
    page_results: Pending = field(default_factory=lambda: Pending("a page tool result"))
    # mcp.set_roots: the folders the user lets servers know about (roots/list), none by default
    roots: list[dict[str, Any]] = field(default_factory=list)
    # what MCP servers ask of the user (elicitation, sampling) goes to the page through the newest running
    # chat.run's events; mcp.elicitation_result and mcp.sampling_answer answer it
    runs: list[ActiveRun] = field(default_factory=list)
    elicitations: Pending = field(default_factory=lambda: Pending("an answer to an elicitation"))
    questions: dict[str, tuple[dict[str, Any], ActiveRun]] = field(default_factory=dict)  # id -> (params, run)
    samplings: Pending = field(default_factory=lambda: Pending("an answer to a sampling request"))
    sampling_runs: dict[str, ActiveRun] = field(default_factory=dict)  # sampling id -> the run it was shown in

    def end_run(self, run: ActiveRun) -> None:
        """The run ended: what its servers still ask is cancelled or denied (nobody is there to answer)."""
        self.runs.remove(run)
        for question, (_params, asked_in) in list(self.questions.items()):
            if asked_in is run and question in self.elicitations.waiting():
                self.elicitations.resolve(question, {"action": "cancel"})
        for sample, asked_in in list(self.sampling_runs.items()):
            if asked_in is run and sample in self.samplings.waiting():
                self.samplings.resolve(sample, {"action": "deny"})
    # tests and demos: vendors answered from recordings instead of the network (use_transport)
    transport_factory: Callable[[], Transport] | None = None
    _oauth: OAuthClient | None = None
    # where the OAuth client keeps tokens across reloads (the browser's IndexedDB, encrypted; memory in CPython)
    oauth_vault: Vault | None = None
    # the keys DPoP-bound tokens are bound to, kept as long as the vault (the worker's WebCrypto keys in IndexedDB)
    oauth_keys: DPoPKeys | None = None

    def oauth(self) -> OAuthClient:
        """The OAuth client every MCP session uses, created and installed on first use."""
        if self._oauth is None:
            from pycore.http import default_transport
            from pycore.mcp.oauth import OAuthClient, install
            from pycore.mcp.oauth_idb import default_dpop_keys, default_vault
            from pycore.mcp.oauth_vault import VaultOAuthStore

            self.oauth_vault = self.oauth_vault or default_vault()
            self.oauth_keys = self.oauth_keys or default_dpop_keys()
            self._oauth = OAuthClient(default_transport(), VaultOAuthStore(self.oauth_vault),
                                      dpop_keys=self.oauth_keys or False)
            install(self._oauth)
        return self._oauth

    async def forget_oauth(self) -> None:
        """Drop the OAuth client, as a page reload does: what it saved stays in :attr:`oauth_vault`."""
        if self._oauth is not None:
            from pycore.mcp.oauth import install

            await self._oauth.http.aclose()
            self._oauth = None
            install(None)

    def connection(self, server_id: str) -> Connection:
        try:
            return self.connections[server_id]
        except KeyError:
            known = ", ".join(sorted(self.connections)) or "none"
            raise LookupError(f"no MCP server {server_id!r} is connected (connected: {known})") from None


STATE = WorkerState()
