"""T-R21: the relay's HTTP front door under hostile request heads, against the real relay on loopback.

Oversized heads get a 431 (or the connection closed), a head that never completes is cut off (a header
read deadline, against slowloris), thousands of half-sent requests hold a bounded number of descriptors
while a well-formed request is still answered, and a request carrying two Host, Origin or Authorization
headers is refused whole, never judged by the first one.
"""

from __future__ import annotations

import resource
import selectors
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
from conftest import RunningRelay, relay

from server.config import FrontLimits
from server.front import Front

FLOOD = 2000
PATIENCE = 60.0  # seconds any single wait in this file may take; the relay's own deadlines are far shorter


def address(r: RunningRelay) -> tuple[str, int]:
    parts = urlsplit(r.base)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def host(r: RunningRelay) -> bytes:
    return urlsplit(r.base).netloc.encode()


def connect(r: RunningRelay) -> socket.socket:
    return socket.create_connection(address(r), timeout=PATIENCE)


def read_head(sock: socket.socket) -> bytes:
    """Whatever the relay answers up to the end of its response head; b"" if it closed (or reset) instead."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    return data


def exchange(r: RunningRelay, head: bytes) -> bytes:
    with connect(r) as sock:
        sock.sendall(head)
        return read_head(sock)


def status(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def peak_rss_kb(pid: int) -> int:
    status_lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(x for x in status_lines if x.startswith("VmHWM")).split()[1])


@pytest.fixture
def running(dist: Path, tmp_path: Path) -> Iterator[RunningRelay]:
    with relay(dist, tmp_path, None) as r:
        yield r


# ---- oversized heads ------------------------------------------------------------------------------
def send_until_refused(sock: socket.socket, chunks: Iterator[bytes]) -> bool:
    """Sends every chunk; False as soon as the relay closed the connection under us."""
    try:
        for chunk in chunks:
            sock.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


def one_giant_header(total: int) -> Iterator[bytes]:
    yield b"X-Giant: "
    for _ in range(total // 65536):
        yield b"a" * 65536
    yield b"\r\n"


def many_headers(total: int) -> Iterator[bytes]:
    line = b"X-Many: " + b"b" * 54 + b"\r\n"  # 64 bytes a header
    batch = line * 1024
    for _ in range(total // len(batch)):
        yield batch


@pytest.mark.parametrize("shape", [one_giant_header, many_headers])
def test_t_r21_tens_of_megabytes_of_headers_get_431_or_a_closed_connection(running, shape):
    r = running
    before = peak_rss_kb(r.proc.pid)
    with connect(r) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: " + host(r) + b"\r\n")
        completed = send_until_refused(sock, shape(32 * 1024 * 1024))
        if completed:
            completed = send_until_refused(sock, iter([b"\r\n"]))
        answer = read_head(sock)
    # Never served: either a 431 or the connection ended under the sender.
    assert status(answer) in (431, None), answer[:200]
    assert not completed or answer == b"" or status(answer) == 431
    # The relay did not buffer the head it refused.
    assert peak_rss_kb(r.proc.pid) - before < 16 * 1024, (before, peak_rss_kb(r.proc.pid))
    # and goes on serving
    assert httpx2.get(r.base + "/", timeout=PATIENCE).status_code == 200


def test_a_large_but_reasonable_head_is_still_served(running):
    r = running
    answer = exchange(r, b"GET / HTTP/1.1\r\nHost: " + host(r) + b"\r\nX-Big: " + b"c" * 24_000 + b"\r\n"
                      + b"X-Cookie-Like: " + b"d" * 8_000 + b"\r\nConnection: close\r\n\r\n")
    assert status(answer) == 200, answer[:200]


# ---- duplicate headers ----------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["host-first-good", "host-first-bad", "origin", "authorization"])
def test_t_r21_two_host_origin_or_authorization_headers_are_refused_not_judged_by_the_first(running, case):
    r = running
    own, token = host(r), r.token.encode()
    origin = b"http://" + own
    lines = {
        "host-first-good": [b"GET / HTTP/1.1", b"Host: " + own, b"Host: rebind.attacker.example"],
        "host-first-bad": [b"GET / HTTP/1.1", b"Host: rebind.attacker.example", b"Host: " + own],
        "origin": [b"GET /api/servers HTTP/1.1", b"Host: " + own, b"Authorization: Bearer " + token,
                   b"Origin: " + origin, b"Origin: https://evil.example"],
        "authorization": [b"GET /api/servers HTTP/1.1", b"Host: " + own, b"Authorization: Bearer " + token,
                          b"Authorization: Bearer not-the-token"],
    }[case]
    answer = exchange(r, b"\r\n".join([*lines, b"Connection: close", b"", b""]))
    assert status(answer) == 400, answer[:300]
    assert b"access-control-allow-origin" not in answer.lower()
    # The same requests with each header once are answered as before.
    single = [line for i, line in enumerate(lines) if line.split(b":")[0] not in
              {other.split(b":")[0] for other in lines[:i]}]
    assert status(exchange(r, b"\r\n".join([*single, b"Connection: close", b"", b""]))) in (200, 421)


# ---- half-sent requests ---------------------------------------------------------------------------
def ended(sock: socket.socket) -> bool:
    """The relay closed this connection (or answered 408 and closed): it did not serve a request."""
    try:
        answer = read_head(sock)
    except TimeoutError:
        return False
    return answer == b"" or status(answer) == 408


@contextmanager
def descriptors_for(count: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count + 256
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"needs {wanted} descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def all_ended(socks: list[socket.socket], within: float) -> list[socket.socket]:
    """Waits until the relay ended every connection; returns the ones still open (or answered) after ``within``."""
    pending = set(socks)
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + within
        while pending and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=1.0):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                selector.unregister(sock)
                pending.discard(sock)
                sock.setblocking(True)
                sock.settimeout(5)
                if not ended(sock):
                    pending.add(sock)  # answered: counted as a failure below
    return list(pending)


def test_t_r21_thousands_of_half_sent_requests_stay_bounded_and_a_well_formed_request_gets_through(running):
    r = running
    with descriptors_for(FLOOD), ExitStack() as stack:
        baseline = fds(r.proc.pid)
        flood: list[socket.socket] = []
        for i in range(FLOOD):
            sock = stack.enter_context(connect(r))
            if i % 2:  # half of them send a head that never ends, half send nothing at all
                sock.sendall(b"GET / HTTP/1.1\r\nHost: " + host(r) + b"\r\nX-Never-Ends: ")
            flood.append(sock)
        # While every one of them is still open on this side, a well-formed request is answered.
        assert httpx2.get(r.base + "/", timeout=PATIENCE).status_code == 200
        response = httpx2.get(r.base + "/api/servers", headers=r.auth, timeout=PATIENCE)
        assert response.status_code == 200 and response.json()["servers"]
        # The relay holds a bounded number of them, not one descriptor per half-sent request.
        held = fds(r.proc.pid) - baseline
        assert held < FLOOD // 3, held
        # None of them is ever served, and none stays open past the relay's header deadline.
        assert not all_ended(flood, within=PATIENCE)
        assert fds(r.proc.pid) - baseline < 16
        assert httpx2.get(r.base + "/", timeout=PATIENCE).status_code == 200


def test_t_r21_a_slowloris_trickle_is_cut_off_at_the_header_deadline(running):
    r = running
    head = b"GET / HTTP/1.1\r\nHost: " + host(r) + b"\r\n" + b"X-Trickle: " + b"e" * 10_000
    with connect(r) as trickle, connect(r) as silent:
        start = time.monotonic()
        cut = False
        for byte in head:  # one byte every 0.2 s: always "making progress", never finishing
            try:
                trickle.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                cut = True
                break
            if time.monotonic() - start > PATIENCE:
                break
            time.sleep(0.2)
        assert cut or ended(trickle), "the trickled head was never cut off"
        silent.settimeout(PATIENCE)
        assert ended(silent)


class StubConnection:
    def __init__(self, front: Front) -> None:
        self.front, self.dropped = front, False

    def drop(self) -> None:
        self.dropped = True
        self.front.forget(self)


async def test_at_the_limit_the_oldest_half_sent_connection_makes_room_and_busy_ones_are_never_pushed_out():
    front = Front(FrontLimits(max_connections=3))
    oldest, busy, newer, late, last = (StubConnection(front) for _ in range(5))
    for connection in (oldest, busy, newer):
        assert front.admit(connection)
    front.pending.update({oldest: None, newer: None})  # ``busy`` has a complete head: it is being served
    assert front.admit(late) and oldest.dropped and not newer.dropped and not busy.dropped
    front.pending.pop(newer)
    assert not front.admit(last)  # everything open is serving a request: the newcomer is the one refused
    assert front.open == {busy, newer, late} and not busy.dropped
