"""The offline guard of tests/conftest.py: it blocks the network, allows loopback, names the culprit, and
reaches subprocesses (the way nbmake's kernels are started)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import course_network_guard as guard
import pytest

TEST_NET = ("203.0.113.7", 443)  # TEST-NET-3, reserved for documentation: never a real host


@pytest.fixture
def own_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Send this test's deliberate attempts to its own log, so the session's log stays clean."""
    log = tmp_path / "blocked.log"
    monkeypatch.setenv(guard.LOG_ENV, str(log))
    return log


def test_guard_is_installed_for_the_session() -> None:
    assert socket.socket.connect.__module__ == guard.__name__, "tests/conftest.py should install the offline guard"
    assert os.environ.get(guard.ENABLE_ENV) == "1"
    assert str(Path(guard.__file__).parent) in os.environ["PYTHONPATH"].split(os.pathsep)


def test_connect_to_a_remote_address_is_blocked_and_names_the_caller(own_log: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with pytest.raises(guard.NetworkAccessBlocked) as caught:
            sock.connect(TEST_NET)
    message = str(caught.value)
    assert "203.0.113.7" in message and "test_network_guard.py" in message and "offline" in message
    assert "test_connect_to_a_remote_address" in own_log.read_text()


def test_connect_ex_and_name_lookups_are_blocked(own_log: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with pytest.raises(OSError):
            sock.connect_ex(TEST_NET)
    with pytest.raises(guard.NetworkAccessBlocked, match="huggingface.co"):
        socket.getaddrinfo("huggingface.co", 443)
    with pytest.raises(guard.NetworkAccessBlocked):
        socket.create_connection(("example.org", 80), timeout=1)
    assert len(own_log.read_text().splitlines()) == 3


def test_udp_to_a_remote_address_is_blocked(own_log: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        with pytest.raises(guard.NetworkAccessBlocked):
            sock.sendto(b"x", ("8.8.8.8", 53))


def test_loopback_stays_open() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(("localhost", server.getsockname()[1]), timeout=5) as client:
            connection, _ = server.accept()
            client.sendall(b"ping")
            assert connection.recv(4) == b"ping"
            connection.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost", b"127.0.0.1"])
def test_loopback_names_are_recognised(host: object) -> None:
    assert guard.is_loopback_host(host)


@pytest.mark.parametrize("host", ["10.0.0.1", "8.8.8.8", "huggingface.co", "2001:db8::1", None, 5])
def test_other_hosts_are_not_loopback(host: object) -> None:
    assert not guard.is_loopback_host(host)


def test_subprocesses_are_guarded_too(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    code = (
        "import socket, course_network_guard as g\n"
        "assert socket.socket.connect.__module__ == g.__name__, 'sitecustomize did not install the guard'\n"
        "s = socket.socket()\n"
        "try:\n    s.connect(('203.0.113.7', 443))\nexcept g.NetworkAccessBlocked as e:\n    print('BLOCKED', e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, guard.LOG_ENV: str(log)},
    )
    assert result.returncode == 0, result.stderr
    assert "BLOCKED" in result.stdout and "<string>" in result.stdout
    assert "203.0.113.7" in log.read_text()


def test_jupyter_kernels_are_guarded(tmp_path: Path) -> None:
    """nbmake runs each notebook in a fresh kernel started by nbclient; that kernel must carry the guard."""
    import nbformat
    from nbclient import NotebookClient

    code = (
        "import socket, course_network_guard as g\n"
        "assert socket.socket.connect.__module__ == g.__name__, 'the kernel has no offline guard'\n"
        "try:\n    socket.create_connection(('203.0.113.7', 443), timeout=1)\n"
        "except g.NetworkAccessBlocked:\n    print('BLOCKED')\n"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    log = tmp_path / "kernel.log"
    os.environ[guard.LOG_ENV], saved = str(log), os.environ[guard.LOG_ENV]
    try:
        NotebookClient(
            notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    finally:
        os.environ[guard.LOG_ENV] = saved
    assert notebook.cells[0].outputs[0]["text"].strip() == "BLOCKED"
    assert "203.0.113.7" in log.read_text()
