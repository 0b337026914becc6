"""A Jupyter kernel for `make test` that does not import torch again for each notebook.

Every notebook's set-up cell imports torch, datasets and the Trainer, about 5 s of CPU, and `make test` starts 22
kernels. Here one process per pytest worker (the *template*) imports the heavy part that is the same in any process,
torch and the libraries listed in :data:`PRELOAD` (about 2.5 s), and nothing of the course, then waits. Each kernel
is a fork of it that runs `python -m ipykernel_launcher -f CONNECTION_FILE` as a kernel started the usual way would:
in the notebook's folder, with the environment jupyter_client hands it, in a session of its own (so an interrupt
reaches it and what it starts), with torch's and numpy's seeds drawn afresh. Its namespace is empty: a notebook
that forgets an import still fails. The scripts' test (tests/test_examples.py) makes the same trade.

Not preloaded: what decides at import whether it runs in a kernel. transformers, datasets and huggingface_hub
import `tqdm.auto` (progress bars), `transformers.trainer` picks the Trainer's progress table by it, and pandas its
display width: imported in the template, a notebook would get a terminal's choices. tests/test_warm_kernel.py holds
the choices to a plain kernel's. A notebook that set a variable torch reads at import would see it ignored; none
does. `make execute`, which writes the committed outputs, and `make test WARM_KERNEL=` use the plain kernel.

jupyter_client starts it through a kernel provisioner (:class:`WarmProvisioner`), named by the kernel spec that
:func:`write_kernel_spec` writes; tests/conftest.py sets both up when `make test` passes
``--nbmake-kernel=course-warm``. docs/setup.md gives the figures.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

from jupyter_client.provisioning import LocalProvisioner
from jupyter_client.provisioning.factory import KernelProvisionerFactory

NAME = "course-warm"  # the kernel spec's name and the provisioner's
# What the template imports: the heavy part of every set-up cell's imports, none of which asks whether it runs in a
# kernel (scikit-learn is left out: it imports pandas).
PRELOAD = (
    "import numpy, pyarrow, scipy.optimize, safetensors.torch, tokenizers\n"
    "import torch, torch._dynamo, torch.distributed.fsdp, torch.distributed.tensor\n"
)
LAUNCHER = "ipykernel_launcher"

# The template: imports, then answers one JSON request a line on stdin with one JSON line on stdout.
#   {"op": "fork", "args": [...], "cwd": "...", "env": {...}}  -> {"pid": N}
#   {"op": "status", "pid": N}                                 -> {"code": null (running) or the exit status}
TEMPLATE = (
    PRELOAD
    + """import gc, json, os, sys, traceback
from ipykernel import kernelapp

gc.freeze()  # the libraries' objects: a kernel's collections walk only what its notebook made
ended = {}
for line in sys.stdin:
    job = json.loads(line)
    if job["op"] == "status":
        pid = job["pid"]
        if pid not in ended:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                ended[pid] = os.waitstatus_to_exitcode(status)
        print(json.dumps({"code": ended.get(pid)}), flush=True)
        continue
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setsid()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(2, 1)  # the kernel's own prints go where a kernel's go: the stderr of its starter
            # a fresh interpreter draws these seeds from the system at import; the template drew them once
            torch.seed()
            numpy.random.seed()
            os.chdir(job["cwd"])
            os.environ.clear()
            os.environ.update(job["env"])
            sys.argv = [kernelapp.__file__, *job["args"]]
            if sys.path and sys.path[0] == "":
                del sys.path[0]  # as ipykernel_launcher does; the shell puts the folder back
            kernelapp.launch_new_instance()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    print(json.dumps({"pid": pid}), flush=True)
"""
)


class WarmKernelError(RuntimeError):
    """The template process could not start a kernel; the message says what to do."""


class _Template:
    """The template process of this (pytest) process, started on first use."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request and read its answer."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = subprocess.Popen(
                    [sys.executable, "-c", TEMPLATE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
                )
            assert self._process.stdin is not None and self._process.stdout is not None
            try:
                self._process.stdin.write(json.dumps(request) + "\n")
                self._process.stdin.flush()
            except BrokenPipeError as error:
                raise WarmKernelError(self._died()) from error
            answer = self._process.stdout.readline()
            if not answer:
                raise WarmKernelError(self._died())
            return json.loads(answer)

    def _died(self) -> str:
        code = self._process.wait(timeout=30) if self._process else None
        return (
            f"the warm kernels' template process exited (status {code}); its error is above. "
            "Run `make test WARM_KERNEL=` to use plain kernels, and report the error."
        )


_TEMPLATE = _Template()


class _ForkedKernel:
    """The kernel process as jupyter_client's LocalProvisioner uses a Popen: poll, wait, signals."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = _TEMPLATE.ask({"op": "status", "pid": self.pid})["code"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(LAUNCHER, timeout or 0)
            time.sleep(0.05)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class WarmProvisioner(LocalProvisioner):  # type: ignore[misc]
    """Starts each kernel as a fork of the template process instead of a new interpreter."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        """Fork a kernel for ``cmd`` (``python -m ipykernel_launcher ARGS``) in ``cwd`` with ``env``."""
        if len(cmd) < 3 or cmd[1:3] != ["-m", LAUNCHER]:
            raise WarmKernelError(
                f"the {NAME} kernel starts `python -m {LAUNCHER} ...` only, not {cmd}: "
                "fix the kernel spec that tools.warm_kernel.write_kernel_spec writes"
            )
        cwd = str(kwargs.get("cwd") or Path.cwd())
        env = dict(kwargs.get("env") or os.environ)
        pid = _TEMPLATE.ask({"op": "fork", "args": cmd[3:], "cwd": cwd, "env": env})["pid"]
        self.process = _ForkedKernel(pid)
        self.pid = pid
        self.pgid = pid  # the kernel opened a session of its own: signals go to it and what it started
        self.cwd = cwd
        return self.connection_info


def write_kernel_spec(folder: Path) -> Path:
    """Write the ``course-warm`` kernel spec under ``folder/kernels`` (put ``folder`` on ``JUPYTER_PATH``)."""
    spec = folder / "kernels" / NAME
    spec.mkdir(parents=True, exist_ok=True)
    kernel = {
        "argv": ["python", "-m", LAUNCHER, "-f", "{connection_file}"],
        "display_name": "Python 3 (course, warm start for make test)",
        "language": "python",
        "metadata": {"kernel_provisioner": {"provisioner_name": NAME}},
    }
    (spec / "kernel.json").write_text(json.dumps(kernel, indent=1), encoding="utf-8")
    return spec


def register() -> None:
    """Make the provisioner known to jupyter_client in this process (no package entry point needed)."""
    group = KernelProvisionerFactory.GROUP_NAME
    KernelProvisionerFactory.provisioners[NAME] = EntryPoint(NAME, f"{__name__}:WarmProvisioner", group)
