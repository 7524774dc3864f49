"""The listening sockets this process holds: a port (or a unix socket path)
a test left bound, which the next run, or another worker, cannot bind.

Linux: each descriptor in ``/proc/self/fd`` that is a socket reads
``socket:[inode]``; the kernel's tables (``/proc/net/tcp``, ``tcp6``,
``udp``, ``udp6``, ``unix``) give each inode's state and local address.
Elsewhere ``psutil`` lists the process's connections.

Reading those tables costs far more than a test may pay each time, so a
look first asks how many descriptors the process has: one ``fstat`` of
``/proc/self/fd``, held open (its size is the count, since Linux 6.2; a
listing of it on older kernels). Only when the count moved are the
descriptors read again, and only when the set of socket inodes moved are
the tables. A test that closes one descriptor and opens a listening
socket in its place leaves the count as it was: that socket is seen at
the next look the count moves.

A finding's text reads the same from run to run: ``tcp 127.0.0.1:8080
listening``, ``tcp6 [::1]:* listening`` (a port in the ephemeral range,
where the kernel picks a port for ``bind(("", 0))``, reads ``*``), ``udp
0.0.0.0:5353 bound``, ``unix <tmp>/app.sock listening``, ``unix @name
listening`` (an abstract name).
"""

from __future__ import annotations

import os
import socket
import sys
import weakref
from collections.abc import Callable, Iterable

FD_DIR = "/proc/self/fd"
NET = "/proc/net"
PORT_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"

Found = tuple[int, str]  # (inode, or descriptor where there is no /proc; the finding's text)

UNWATCHED = ("hermetic guard: listening sockets (HRM613) are not watched here: no /proc/self/fd "
             "and no psutil (pip install 'flake8-hermetic[guard]')")

_TCP_LISTEN = "0A"
_UDP_UNCONNECTED = "07"
_UNIX_ACCEPTING = 0x10000  # __SO_ACCEPTCON: a unix socket that listen() was called on
_UNIX_UNCONNECTED = "01"


def ephemeral_ports() -> tuple[int, int]:
    """The range the kernel picks a port from for ``bind(("", 0))`` (and an unbound ``connect``)."""
    try:
        with open(PORT_RANGE, encoding="ascii") as handle:
            low, high = (int(word) for word in handle.read().split()[:2])
        return low, high
    except (OSError, ValueError):
        return (32768, 60999) if sys.platform.startswith("linux") else (49152, 65535)


def has_proc() -> bool:
    return os.path.isdir(FD_DIR) and os.path.isdir(NET)


def _psutil_process() -> object | None:
    try:
        import psutil  # type: ignore[import-untyped]

        process = psutil.Process()
        process.net_connections("inet")
        return process
    except Exception:  # noqa: BLE001 - absent, or blind here: the watch says it cannot look
        return None


def watchable() -> bool:
    return has_proc() or _psutil_process() is not None


def descriptor_counter() -> Callable[[], int] | None:
    """The cheapest call that answers how many descriptors the process has, or None."""
    if os.path.isdir(FD_DIR):
        try:
            # held open: an fstat of it costs a third of a stat of the path (no walk through /proc/self)
            held = os.open(FD_DIR, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            held = -1
        counted = 0
        if held >= 0:
            try:
                counted = os.fstat(held).st_size
            except OSError:
                counted = 0
        if counted > 0:  # Linux 6.2 and later: the directory's size is the number of descriptors
            fstat = os.fstat

            def by_size() -> int:
                try:
                    return fstat(held).st_size
                except OSError:
                    return -1

            weakref.finalize(by_size, os.close, held)  # closed with the watch that holds the counter
            return by_size
        if held >= 0:
            os.close(held)

        def by_listing() -> int:
            try:
                return len(os.listdir(FD_DIR))
            except OSError:
                return -1

        return by_listing
    process = _psutil_process()
    if process is None:
        return None
    count = getattr(process, "num_fds", None) or getattr(process, "num_handles", None)
    return count  # type: ignore[return-value]


def socket_inodes() -> frozenset[int]:
    """The inodes of the sockets among this process's descriptors."""
    found = set()
    try:
        names = os.listdir(FD_DIR)
    except OSError:
        return frozenset()
    for name in names:
        try:
            target = os.readlink(f"{FD_DIR}/{name}")
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
        if target.startswith("socket:["):
            try:
                found.add(int(target[8:-1]))
            except ValueError:
                continue
    return frozenset(found)


def _ipv4(text: str) -> str:
    return socket.inet_ntop(socket.AF_INET, bytes.fromhex(text)[::-1])


def _ipv6(text: str) -> str:
    raw = bytes.fromhex(text)
    return "[" + socket.inet_ntop(socket.AF_INET6, b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))) + "]"


def _port(port: int, ephemeral: tuple[int, int]) -> str:
    return "*" if ephemeral[0] <= port <= ephemeral[1] else str(port)


def _lines(name: str) -> Iterable[list[str]]:
    try:
        with open(f"{NET}/{name}", encoding="ascii", errors="replace") as handle:
            next(handle, None)
            for line in handle:
                yield line.split()
    except OSError:
        return


def listening(inodes: frozenset[int], ephemeral: tuple[int, int], path_label: Callable[[str], str]) -> set[Found]:
    """Of ``inodes``, those that listen (TCP), are bound to a fixed port (UDP)
    or listen or are bound at a path (unix), with their finding's text."""
    found: set[Found] = set()
    if not inodes:
        return found
    for table, address in (("tcp", _ipv4), ("tcp6", _ipv6), ("udp", _ipv4), ("udp6", _ipv6)):
        for fields in _lines(table):
            if len(fields) < 10 or not fields[9].isdigit() or int(fields[9]) not in inodes:
                continue
            host, _, port_hex = fields[1].partition(":")
            try:
                port = int(port_hex, 16)
                where = f"{address(host)}:{_port(port, ephemeral)}"
            except ValueError:
                continue
            if table.startswith("tcp") and fields[3] == _TCP_LISTEN:
                found.add((int(fields[9]), f"{table} {where} listening"))
            elif table.startswith("udp") and fields[3] == _UDP_UNCONNECTED and port and not where.endswith(":*"):
                # an unconnected UDP socket in the ephemeral range is most often a client's
                # (the kernel bound it at its first send): only a fixed port collides
                found.add((int(fields[9]), f"{table} {where} bound"))
    for fields in _lines("unix"):
        if len(fields) < 8 or not fields[6].isdigit() or int(fields[6]) not in inodes:
            continue
        try:
            flags = int(fields[3], 16)
        except ValueError:
            continue
        path = " ".join(fields[7:])
        if flags & _UNIX_ACCEPTING:
            found.add((int(fields[6]), f"unix {path_label(path)} listening"))
        elif fields[5] == _UNIX_UNCONNECTED and fields[4] != "0001":  # a datagram socket bound at a path
            found.add((int(fields[6]), f"unix {path_label(path)} bound"))
    return found


def listening_psutil(ephemeral: tuple[int, int], path_label: Callable[[str], str]) -> set[Found]:
    """As :func:`listening`, from ``psutil`` (keyed by descriptor): where there is no /proc."""
    import psutil  # type: ignore[import-untyped]

    found: set[Found] = set()
    try:
        connections = psutil.Process().net_connections("all")
    except (psutil.Error, OSError):
        return found
    for conn in connections:
        if conn.family == getattr(socket, "AF_UNIX", None):
            if conn.laddr and not conn.raddr:
                state = "listening" if conn.type == socket.SOCK_STREAM else "bound"
                found.add((conn.fd, f"unix {path_label(str(conn.laddr))} {state}"))
            continue
        if not conn.laddr:
            continue
        six = conn.family == socket.AF_INET6
        host = f"[{conn.laddr.ip}]" if six else conn.laddr.ip
        where = f"{host}:{_port(conn.laddr.port, ephemeral)}"
        if conn.type == socket.SOCK_STREAM and conn.status == psutil.CONN_LISTEN:
            found.add((conn.fd, f"tcp{'6' if six else ''} {where} listening"))
        elif conn.type == socket.SOCK_DGRAM and not conn.raddr and not where.endswith(":*"):
            found.add((conn.fd, f"udp{'6' if six else ''} {where} bound"))
    return found
