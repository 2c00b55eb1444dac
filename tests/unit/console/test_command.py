"""`elsai console` as a user runs it: prints its loopback URL and serves until stopped."""

from __future__ import annotations

import http.client
import subprocess
import sys
from pathlib import Path


def test_the_command_serves_the_store_on_a_printed_loopback_url(tmp_path: Path) -> None:
    (tmp_path / "session_s1").mkdir()
    (tmp_path / "session_s1" / "session.json").write_text(
        '{"session_id": "s1", "created_at": "2026-01-01T00:00:00Z"}'
    )
    command = [sys.executable, "-m", "elsai", "console", "--storage-dir", str(tmp_path)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("elsai console on http://127.0.0.1:"), line
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/sessions")
        response = conn.getresponse()
        assert response.status == 200 and "s1" in response.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_without_a_store_or_an_api_it_says_what_to_give(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "elsai", "console", "--storage-dir", str(tmp_path / "nope")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "no session store at" in out.stderr
    bad_port = subprocess.run(
        [sys.executable, "-m", "elsai", "console", "--port", "70000"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad_port.returncode == 2 and "must be 0..65535" in bad_port.stderr
