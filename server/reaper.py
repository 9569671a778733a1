"""Child-process accounting, and the last line of defence when the relay stops.

Every child runs in its own session (``start_new_session``), so its process group id is its pid.
The normal path (stdin close, SIGTERM, SIGKILL to the group, by the SDK) should leave nothing for
``kill`` to do; it only acts on pids the relay itself recorded at spawn time. Linux only (it reads
/proc); elsewhere pids are not recorded and it does nothing.
"""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

import anyio

log = logging.getLogger("orizuru.relay")


def child_pids() -> set[int]:
    """Direct children of this process, from /proc/self/task/*/children."""
    pids: set[int] = set()
    for path in Path("/proc/self/task").glob("*/children"):
        try:
            pids.update(int(p) for p in path.read_text().split())
        except (OSError, ValueError):
            continue
    return pids


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def kill(pids: set[int]) -> None:
    for pid in pids:
        if not alive(pid):
            continue
        try:
            os.killpg(pid, signal.SIGKILL)
            log.warning("killed leftover child process group %d at shutdown", pid)
        except (ProcessLookupError, PermissionError):
            continue


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``."""
    try:
        os.killpg(pgid, 0)  # the usual answer, "none at all", without scanning every process on the machine
    except ProcessLookupError:
        return []
    except PermissionError:
        pass  # someone's, maybe not ours: look
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(stat.parent.name))
    return members


async def stop_group(pgid: int, grace: float = 2.0) -> None:
    """SIGTERM, then after ``grace`` SIGKILL, whatever is left in a stopped child's process group.

    The SDK stops the child itself; a grandchild that outlived it (same group) is caught here.
    """
    with anyio.CancelScope(shield=True):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not group_members(pgid):
                return
            log.info("process group %d outlived its leader: %s", pgid, sig.name)
            try:
                os.killpg(pgid, sig)
            except (ProcessLookupError, PermissionError):
                return
            with anyio.move_on_after(grace):
                while group_members(pgid):
                    await anyio.sleep(0.05)
