"""Child-process accounting: every process a session's server started ends with the session (T-R13, T-R22).

Every child runs in its own session (``start_new_session``), so its process group id is its pid, and
the SDK's stop (stdin close, SIGTERM, SIGKILL to the group) ends the group. Two kinds of descendant
leave the group, and this module ends them too:

- one that calls ``setsid()`` (or ``setpgid``) is no longer in the group, but still in the child's
  process *tree*: ``session_tree`` records the child's descendants (pid and start time, so a reused pid is
  never signalled) just before the SDK's stop, and ``end_tree`` ends whatever of them survived it, with
  anything they started meanwhile;
- one whose parent exits first (the classic double-fork daemon) is orphaned. Linux hands an orphan to
  its nearest *child subreaper* ancestor, else to init, where nothing could tell it from any other
  process. ``become_subreaper`` makes the relay that ancestor (``PR_SET_CHILD_SUBREAPER``, Linux 3.4+,
  no privileges), so an orphan stays the relay's own child. The relay (server/sessions.py) reaps those
  that exit, on SIGCHLD, and ends the live ones once no session is running any more: an orphan no
  longer says which session it came from, but with none running it can only be from one that ended.

Why not the alternatives: cgroups would group a tree exactly but need a delegated, writable cgroup
(systemd user sessions have one, containers and plain shells often not); a tree walk alone (no
subreaper) loses a double-forked daemon to init. Where prctl is refused (not Linux, or a seccomp
policy), the tree walk still ends setsid() grandchildren and the relay logs what it cannot do.

Linux only (it reads ``/proc``); elsewhere pids are not recorded and it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

import anyio

log = logging.getLogger("orizuru.relay")

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
POLL = 0.05


def become_subreaper() -> bool:
    """Makes orphaned descendants of this process its own children, not init's; False (logged) if it cannot."""
    why = "not Linux"
    if Path("/proc/self/task").is_dir():
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
                return True
            why = os.strerror(ctypes.get_errno())
        except (OSError, AttributeError) as e:
            why = str(e)
    log.warning("cannot become a child subreaper (%s): a process that a server double-forks away (a daemon) "
                "outlives its session; a grandchild that calls setsid() is still ended with it", why)
    return False


# ---- /proc ------------------------------------------------------------------------------------------
def _stat(pid: int) -> list[str] | None:
    """Fields 3.. of /proc/PID/stat (state first), or None if there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot): with the pid, names one process even if pids are reused."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def children_of(pid: int | str) -> set[int]:
    """Direct children of ``pid`` (any of its threads), from /proc/PID/task/*/children."""
    pids: set[int] = set()
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            pids.update(int(p) for p in path.read_text().split())
        except (OSError, ValueError):
            continue
    return pids


def child_pids() -> set[int]:
    """Direct children of this process."""
    return children_of("self")


def group_members(pgid: int, zombies: bool = False) -> list[int]:
    """Processes in process group ``pgid``; live ones only unless ``zombies``."""
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
        if (zombies or fields[0] != "Z") and int(fields[2]) == pgid:
            members.append(int(stat.parent.name))
    return members


# ---- one session's processes ------------------------------------------------------------------------
Tree = dict[int, int]  # pid -> start time


def session_tree(root: int) -> Tree:
    """``root``'s live descendants, at any depth; taken before the SDK stops ``root``, while they are still below it."""
    tree: Tree = {}
    todo = list(children_of(root))
    while todo:
        pid = todo.pop()
        started = start_time(pid)
        if started is not None and pid not in tree:
            tree[pid] = started
            todo += children_of(pid)
    return tree


def _same(pid: int, started: int) -> bool:
    return start_time(pid) == started


def _survivors(tree: Tree, pgid: int | None) -> set[int]:
    """Live processes of ``tree`` and of group ``pgid``; ``tree`` grows by what they started since."""
    roots = [pid for pid, started in tree.items() if _same(pid, started)]
    if pgid is not None:
        for pid in group_members(pgid):
            started = start_time(pid)
            if started is not None:
                tree.setdefault(pid, started)
                roots.append(pid)
    for pid in roots:
        tree.update(session_tree(pid))
    return {pid for pid, started in tree.items() if alive(pid) and _same(pid, started)}


def reap(tree: Tree, pgid: int | None = None) -> None:
    """Collects the exit status of this process's own zombie children among ``tree`` (and group ``pgid``).

    Only pids this module signalled or adopted orphans: never a server child itself, whose status the
    event loop's child watcher is waiting for.
    """
    me = os.getpid()
    candidates = {pid: started for pid, started in tree.items() if pid != pgid}
    for pid in group_members(pgid, zombies=True) if pgid is not None else []:
        if pid != pgid:
            candidates.setdefault(pid, start_time(pid) or -1)
    for pid, started in candidates.items():
        fields = _stat(pid)
        if fields and fields[0] == "Z" and int(fields[1]) == me and int(fields[19]) == started:
            with suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


async def end_tree(tree: Tree, pgid: int | None, grace: float = 2.0) -> None:
    """SIGTERM, then after ``grace`` SIGKILL, what is left of a stopped child's processes.

    That is its process group ``pgid`` (a grandchild that outlived the child in the same group) and
    ``tree``, the descendants recorded before the child was stopped (a grandchild that called setsid()
    left the group, not the tree), with whatever those started since. Zombies this leaves the relay
    holding (as subreaper) are reaped.
    """
    with anyio.CancelScope(shield=True):
        try:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                survivors = _survivors(tree, pgid)
                if not survivors:
                    return
                what = f"left of process group {pgid}" if pgid is not None else "orphans"
                log.info("%s outlived their server, %s to %s", what, sig.name, sorted(survivors))
                for pid in survivors:
                    with suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, sig)
                with anyio.move_on_after(grace):
                    while _survivors(tree, pgid):
                        reap(tree, pgid)
                        await anyio.sleep(POLL)
        finally:
            reap(tree, pgid)


# ---- the relay's own children -----------------------------------------------------------------------
def kill(pids: set[int]) -> None:
    """At shutdown: SIGKILL the process groups of the children the relay recorded at spawn time."""
    for pid in pids:
        if not alive(pid):
            continue
        try:
            os.killpg(pid, signal.SIGKILL)
            log.warning("killed leftover child process group %d at shutdown", pid)
        except (ProcessLookupError, PermissionError):
            continue


def strays(servers: Iterable[int]) -> Tree:
    """This process's children that are not one of the running ``servers``: orphans it adopted as subreaper."""
    running = set(servers)
    return {pid: started for pid in child_pids() - running if (started := start_time(pid)) is not None}


def kill_strays(servers: Iterable[int]) -> None:
    """At shutdown: SIGKILL every adopted orphan and everything below it."""
    tree = strays(servers)
    for pid in list(tree):
        tree.update(session_tree(pid))
    for pid, started in tree.items():
        if alive(pid) and _same(pid, started):
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    if tree:
        log.warning("killed %d leftover orphaned process(es) at shutdown", len(tree))
