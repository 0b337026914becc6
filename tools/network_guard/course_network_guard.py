"""A guard that refuses network connections to anything but this machine, and says which code tried.

The course must run offline. ``tests/conftest.py`` installs this guard in the test process and, through
``sitecustomize.py`` in this folder (put on ``PYTHONPATH``), in every Python subprocess the tests start,
including the Jupyter kernels that nbmake launches. Loopback stays allowed: kernels talk to pytest over it.

Environment variables:
    COURSE_NETWORK_GUARD=1       install the guard at interpreter start-up (read by ``sitecustomize``).
    COURSE_NETWORK_GUARD_LOG     a file to which every blocked attempt is appended, one line each, so that the
                                 test session fails even when a library catches the error and falls back.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import traceback
from typing import Any

ENABLE_ENV = "COURSE_NETWORK_GUARD"
LOG_ENV = "COURSE_NETWORK_GUARD_LOG"
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}
_ORIGINALS: dict[str, Any] = {}


class NetworkAccessBlocked(ConnectionRefusedError):
    """Raised instead of opening a connection to a non-loopback address.

    A subclass of ``OSError`` (like a real offline failure), so code that handles being offline behaves as it
    would with the network unplugged; the log file still records the attempt.
    """


def is_loopback_host(host: Any) -> bool:
    """True for loopback addresses and names (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str):
        return False
    host = host.strip("[]").split("%", 1)[0].lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _allowed(family: Any, address: Any) -> bool:
    if family == getattr(socket, "AF_UNIX", object()) or isinstance(address, (str, bytes)):
        return True  # a Unix socket path is local by definition
    if isinstance(address, tuple) and address:
        return is_loopback_host(address[0])
    return False


def _caller() -> str:
    """The innermost frame outside this module and the socket machinery: the code that tried."""
    skip = (__file__, os.sep + "socket.py", os.sep + "ssl.py")
    for frame in reversed(traceback.extract_stack()[:-1]):
        if not frame.filename.endswith(skip):
            return f"{frame.filename}:{frame.lineno} in {frame.name}"
    return "unknown code"


def _block(what: str, target: Any) -> None:
    caller = _caller()
    message = (
        f"Network access blocked by the course's offline guard: {what} {target!r}, attempted by {caller}. "
        "The course runs offline: load data and models from the local packages (source='local') and "
        "keep HF_HUB_OFFLINE=1."
    )
    log = os.environ.get(LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"pid {os.getpid()}: {what} {target!r} by {caller}\n")
    raise NetworkAccessBlocked(message)


def install() -> None:
    """Patch ``socket`` so connections (and name lookups) beyond loopback raise :class:`NetworkAccessBlocked`."""
    if _ORIGINALS:
        return
    _ORIGINALS.update(
        connect=socket.socket.connect,
        connect_ex=socket.socket.connect_ex,
        sendto=socket.socket.sendto,
        getaddrinfo=socket.getaddrinfo,
    )

    def connect(self: socket.socket, address: Any) -> Any:
        if not _allowed(self.family, address):
            _block("connect to", address)
        return _ORIGINALS["connect"](self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if not _allowed(self.family, address):
            _block("connect to", address)
        return _ORIGINALS["connect_ex"](self, address)

    def sendto(self: socket.socket, data: Any, *args: Any) -> Any:
        address = args[-1]
        if not _allowed(self.family, address):
            _block("send a datagram to", address)
        return _ORIGINALS["sendto"](self, data, *args)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not is_loopback_host(host):
            _block("look up the address of", host)
        return _ORIGINALS["getaddrinfo"](host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = sendto  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
