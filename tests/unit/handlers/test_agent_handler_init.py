"""What `import agent_handler` loads and does in each kind of Lambda init phase.

Each case is a fresh interpreter (sys.modules is the observable): tracing off must not load
the X-Ray SDK or boto3; tracing on must still emit the handler's X-Ray subsegments; a
SnapStart init must do the first invocation's one-time work and register a restore hook
that builds new clients.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]

_BASE_ENV = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "ELSAI_SESSIONS_BUCKET": "bucket",
    "ELSAI_AGENT_FACTORY": "example_agent:build_agent",
    "ELSAI_MODEL": "scripted",
    "POWERTOOLS_SERVICE_NAME": "elsai",
    "POWERTOOLS_METRICS_NAMESPACE": "elsai",
}


def _run(code: str, env: dict[str, str], extra_path: list[Path] | None = None) -> dict[str, Any]:
    path = [*(extra_path or []), ROOT / "examples" / "agents", ROOT]
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join(map(str, path)),
        **_BASE_ENV,
        **env,
    }
    proc = subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


_LOADED = "import json, sys\n{body}\nprint(json.dumps({{'modules': sorted(sys.modules), **out}}))"


# A slice's step, looked up as the handler does: its models and function, resolved.
_RESOLVE = """
step = agent_handler.step({action!r})
out['resolved'] = [step.request_model().__name__, step.result_model().__name__,
                   step.serving_function().__name__]
"""


def test_tracing_off_imports_neither_the_xray_sdk_nor_boto3_nor_multiagent_code() -> None:
    body = "out = {}\nfrom elsai_lambdas import agent_handler\nout['tracer'] = repr(agent_handler.tracer.tracer)"
    body += _RESOLVE.format(action="run_slice")  # what the first slice's lookup imports too
    result = _run(_LOADED.format(body=body), {"POWERTOOLS_TRACE_DISABLED": "true"})
    assert result["resolved"] == ["SliceRequest", "SliceResult", "serve_slice"]
    tops = {m.split(".")[0] for m in result["modules"]}
    assert "aws_xray_sdk" not in tops
    assert "boto3" not in tops  # clients are built on first use
    assert "example_agent" not in tops  # the factory module loads with the first invocation
    # Graph/Swarm load only when a factory builds one (it imports them itself).
    assert not [m for m in result["modules"] if m.startswith("elsai.multiagent")]
    # Nor does what only a Graph/Swarm job or a non-default conversation manager uses.
    only_some_jobs = {
        "elsai.serverless.orchestration",
        "elsai.serverless.node_waits",
        "elsai.serverless.answers",
        "elsai.conversation.summarizing",
        "elsai.serverless.contract.node_steps",  # plan, node slice and fold models
        "elsai.serverless.orchestration_steps",  # their functions
        "elsai.serverless.parked",  # a job parks only when it waits on a person
    }
    assert not only_some_jobs & set(result["modules"])
    assert result["tracer"] == "None"
    # The check sees them: looking up a Graph's step imports its models and function.
    body = "out = {}\nfrom elsai_lambdas import agent_handler\n" + _RESOLVE.format(action="fold")
    graph = _run(_LOADED.format(body=body), {"POWERTOOLS_TRACE_DISABLED": "true"})
    assert graph["resolved"] == ["FoldRequest", "PlanResult", "serve_fold"]
    assert {"elsai.serverless.contract.node_steps", "elsai.serverless.orchestration_steps",
            "elsai.multiagent.step_types"} <= set(graph["modules"])  # fmt: skip


_TRACED = """
import json, sys
from aws_xray_sdk.core import xray_recorder
from elsai_lambdas import agent_handler
from elsai.local.shapes import LocalLambdaContext

sent = []


class Capture:
    def send_entity(self, entity):
        sent.append(json.loads(entity.serialize()))

    def set_daemon_address(self, address):
        pass


xray_recorder.configure(emitter=Capture())
try:
    agent_handler.handler({"action": "run_slice"}, LocalLambdaContext("elsai-agent", 60000))
except Exception as exc:
    error = type(exc).__name__
out = {"error": error, "names": [e["name"] for e in sent],
       "faults": [e["name"] for e in sent if e.get("fault")],
       "xray": "aws_xray_sdk.core" in sys.modules}
print(json.dumps(out))
"""


def test_tracing_on_still_emits_the_handler_subsegments(tmp_path: Path) -> None:
    env = {
        "POWERTOOLS_TRACE_DISABLED": "false",
        "LAMBDA_TASK_ROOT": str(tmp_path),
        "_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
    }
    result = _run(_TRACED, env)
    assert result["xray"] is True
    assert result["error"] == "ValidationError"  # the event lacks every id
    # Powertools streams each closed subsegment: the step's first, then the handler's.
    assert result["names"] == ["## elsai_lambdas.agent_handler._serve", "## handler"]
    # the exception is recorded on both
    assert result["faults"] == ["## elsai_lambdas.agent_handler._serve", "## handler"]


_HOOKS = """
registered = []


def register_after_restore(func, *args, **kwargs):
    registered.append((func, args, kwargs))


def register_before_snapshot(func, *args, **kwargs):
    pass
"""

_SNAP = """
out = {}
from elsai_lambdas import agent_handler
import snapshot_restore_py
from elsai import aws_clients
before = list(aws_clients._clients.values())
out["clients_at_init"] = len(before)
out["hooks"] = [f.__name__ for f, _, _ in snapshot_restore_py.registered]
for func, args, kwargs in snapshot_restore_py.registered:
    func(*args, **kwargs)
after = list(aws_clients._clients.values())
out["clients_after_restore"] = len(after)
out["same_client"] = any(a is b for a in after for b in before)
"""


def test_a_snapstart_init_warms_up_and_restores_with_new_clients(tmp_path: Path) -> None:
    # Stands in for the managed runtime's snapshot_restore_py: records what gets registered.
    (tmp_path / "snapshot_restore_py.py").write_text(_HOOKS)
    env = {"POWERTOOLS_TRACE_DISABLED": "true", "AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start"}
    result = _run(_LOADED.format(body=_SNAP), env, extra_path=[tmp_path])
    tops = {m.split(".")[0] for m in result["modules"]}
    assert {"boto3", "example_agent"} <= tops  # the first invocation's work, done at init
    assert "aws_xray_sdk" not in tops
    assert result["hooks"] == ["after_restore"]
    assert (result["clients_at_init"], result["clients_after_restore"]) == (1, 1)
    assert result["same_client"] is False


_GC = """
import gc, json, sys
late = []  # one entry per collection: did it start once init's imports were under way?
gc.callbacks.append(
    lambda phase, info: phase == "start" and late.append("aws_lambda_powertools" in sys.modules)
)
import elsai_lambdas.{module}
print(json.dumps({{"late": sum(late), "enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}}))
"""


def test_the_handlers_init_runs_no_collection_and_freezes_what_it_built() -> None:
    for module in ("agent_handler", "api_handler"):
        result = _run(_GC.format(module=module), {"POWERTOOLS_TRACE_DISABLED": "true"})
        assert result["late"] == 0, module  # no pass over init's objects while they are built
        assert result["enabled"] is True, module  # collection is back on for the requests
        assert result["frozen"] > 10_000, module  # and later passes skip init's objects
