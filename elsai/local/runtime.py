"""LocalRuntime: the synthesized state machine on a moto server, agent Lambdas as child processes.

Why a server and children: the agent Lambda must be killable mid-tool like a real sandbox,
so it runs in its own process, and that process needs S3 over the network, so moto runs as
a (threaded, in-process) server. moto's Step Functions engine executes the template's ASL
in this process and invokes Lambda through `LambdaSimpleBackend.invoke`, the one seam we
replace: every invocation becomes a child running the real `elsai_lambdas.agent_handler.handler`.
The jobs API is the real `elsai_lambdas.api_handler.handler`, called in process with API Gateway
REST events.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import json
import logging
import os
import tempfile
import threading
import urllib.request
import uuid
import warnings
import zipfile
from pathlib import Path
from typing import Any

from elsai.local.api import InspectMixin, JobsApiMixin
from elsai.local.deploys import Deploy, DeployMixin, Deploys
from elsai.local.events import EventSink
from elsai.local.faults import FAULT_ENV, FaultPlan, InvocationInfo
from elsai.local.invoker import InvocationRecord, run_child
from elsai.local.progress import Progress
from elsai.local.sfn_start_execution import botocore_names_for_start_execution
from elsai.local.shapes import ACCOUNT, REGION
from elsai.local.template import SynthesizedService, function_environment, load_service, resource
from elsai.local.zygote import Zygote
from elsai.serverless.contract import HANDLER_MODULES, handler_name
from elsai.serverless.contract.steps import RUN_SLICE

AGENT_FUNCTION, API_FUNCTION = "elsai-agent", "elsai-api"
BUCKET = "elsai-sessions-local"
MOTO_CONFIG = {"lambda": {"use_docker": False}, "stepfunctions": {"execute_state_machine": True}}
_ENDPOINT_VARS = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL_SFN",
    "AWS_ENDPOINT_URL_LAMBDA",
)


class LocalRuntime(JobsApiMixin, InspectMixin, DeployMixin):
    """Context manager; see the module docstring. Not re-entrant: one per process at a time.

    project: the CDK app directory (its cdk.json) whose DurableAgentService runs (default: cwd);
    service: an already synthesized service instead (tests build it once per session).
    agent_factory: `module:function` for the agent (default: the template's).
    fast_retries: Retry waits of 1 s instead of the template's backoff (tests, quick demos).
    function_timeout_s / safety_margin_ms: each slice's deadline and how early it stops.
    faults: a FaultPlan choosing a Fault per invocation (settable later: `rt.faults = ...`).
    on_event: progress callback (called from moto's threads).
    child_env / pythonpath: extra environment and import paths for the agent children.
    bedrock_credentials: real credentials for the children's Bedrock calls (the runtime's
        S3/SFN/Lambda endpoints stay on moto through the service-specific endpoint vars).
    preloaded: fork children from a server that pre-imported boto3/pydantic/Powertools/elsai
        (default; ~1 s faster per invocation) instead of starting a fresh interpreter each time.
    Starting is the first deploy; `deploy()` is the next one (elsai/local/deploys.py).
    """

    def __init__(
        self,
        *,
        project: Path | None = None,
        service: SynthesizedService | None = None,
        agent_factory: str | None = None,
        fast_retries: bool = False,
        function_timeout_s: float | None = None,
        safety_margin_ms: int | None = None,
        faults: FaultPlan | None = None,
        on_event: EventSink | None = None,
        child_env: dict[str, str] | None = None,
        pythonpath: tuple[str, ...] = (),
        bedrock_credentials: dict[str, str] | None = None,
        preloaded: bool = True,
    ) -> None:
        self.project: Path = (project or Path.cwd()).resolve()
        self.service = service
        self.agent_factory = agent_factory
        self.fast_retries = fast_retries
        self.function_timeout_s = function_timeout_s
        self.safety_margin_ms = safety_margin_ms
        self.faults = faults
        self.child_env: dict[str, str] = dict(child_env or {})
        self.pythonpath = pythonpath
        self.bedrock_credentials = bedrock_credentials
        self.preloaded = preloaded
        self.progress: Progress = Progress(on_event)
        self.invocations: list[InvocationRecord] = []
        self._lock = threading.Lock()
        self._attempts: dict[tuple[str, str, int], int] = {}
        self._last_slice: dict[str, int] = {}
        self._saved_env: dict[str, str | None] = {}
        self._server: Any = None
        self._original_invoke: Any = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._saved_moto_config: Any = None
        self._zygote: Zygote | None = None
        self._patches = contextlib.ExitStack()  # moto patches held while running

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> LocalRuntime:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Load the synthesized service, start moto, deploy the bucket, machine and functions."""
        if self.service is None:
            self.service = load_service(self.project)
        template = self.service.template
        from moto.awslambda_simple.models import LambdaSimpleBackend
        from moto.core.config import default_user_config
        from moto.server import ThreadedMotoServer

        self._workdir = tempfile.TemporaryDirectory(prefix="elsai-local-")
        self.ledger_path: Path = Path(self._workdir.name) / "tool-ledger.jsonl"
        # No access-log line per request, and no engine traceback per failed state: the
        # runtime reports failures itself (events, GET /jobs).
        for name, level in (
            ("werkzeug", logging.ERROR),
            ("moto.stepfunctions.parser", logging.CRITICAL),
        ):
            logging.getLogger(name).setLevel(level)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        self.port: int = self._server.get_host_and_port()[1]
        self.endpoint: str = f"http://127.0.0.1:{self.port}"
        # moto's config is process-global: save what we change (GET /moto-api/config omits some)
        saved = {k: v for k, v in default_user_config.items() if k in MOTO_CONFIG}
        self._saved_moto_config = copy.deepcopy(saved)
        self._set_moto_config(MOTO_CONFIG)
        self._setenv({
            "MOTO_PORT": str(self.port), "AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": None, "AWS_SECURITY_TOKEN": None,
            "AWS_PROFILE": None, "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL_S3": None, "AWS_ENDPOINT_URL_SFN": None, "AWS_ENDPOINT_URL_LAMBDA": None,
            "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_SERVICE_NAME": "elsai",
            "POWERTOOLS_METRICS_NAMESPACE": "elsai", "POWERTOOLS_DEV": None,
        })  # fmt: skip
        if self.preloaded:  # starts importing now, in parallel with the resource setup
            env = {**os.environ, "PYTHONPATH": self._child_pythonpath(None)}
            self._zygote = Zygote(self.project, env)
        self._create_resources(template)
        self._patches.enter_context(botocore_names_for_start_execution())  # continuations
        self._original_invoke = LambdaSimpleBackend.__dict__["invoke"]
        run_function = self._invoke  # moto's Lambda invocations go to this runtime's children

        def invoke(
            _backend: Any,
            function_name: str,
            qualifier: Any,
            body: Any,
            headers: Any,
            response_headers: dict[str, str],
        ) -> bytes:
            return run_function(function_name, qualifier, body, response_headers)

        LambdaSimpleBackend.invoke = invoke  # type: ignore[method-assign,assignment]

        api_handler = importlib.import_module(HANDLER_MODULES["api"])
        api_handler.logger.setLevel(os.environ.get("ELSAI_LOCAL_API_LOG_LEVEL", "WARNING"))
        self._api = api_handler

    def close(self) -> None:
        """Stop the children, the server and the patches; restore the environment."""
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None
        if self._original_invoke is not None:
            from moto.awslambda_simple.models import LambdaSimpleBackend

            LambdaSimpleBackend.invoke = self._original_invoke  # type: ignore[method-assign]
            self._original_invoke = None
        self._patches.close()
        if self._server is not None:
            for step in (self._cleanup, self._restore_moto_config):
                try:
                    step()
                except Exception as exc:  # the next step still runs; never mask the closing error
                    warnings.warn(f"local runtime {step.__name__} failed: {exc!r}", stacklevel=2)
            self._server.stop()
            self._server = None
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env.clear()
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def _setenv(self, values: dict[str, str | None]) -> None:
        for name, value in values.items():
            self._saved_env.setdefault(name, os.environ.get(name))
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    def _set_moto_config(self, config: dict[str, Any]) -> None:
        body = json.dumps(config).encode()  # a body makes it a POST
        urllib.request.urlopen(f"{self.endpoint}/moto-api/config", body, timeout=10).close()

    def _restore_moto_config(self) -> None:
        if self._saved_moto_config is not None:
            self._set_moto_config(self._saved_moto_config)

    def _cleanup(self) -> None:
        """Delete what start() created, so another runtime in this process starts clean."""
        sfn, s3 = getattr(self, "sfn", None), getattr(self, "s3", None)
        arn = getattr(self, "state_machine_arn", None)
        if sfn is not None and arn is not None:
            for execution in sfn.list_executions(stateMachineArn=arn, statusFilter="RUNNING")[
                "executions"
            ]:
                sfn.stop_execution(
                    executionArn=execution["executionArn"], error="LocalRuntimeClosed"
                )
            sfn.delete_state_machine(stateMachineArn=arn)
        if s3 is not None:
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
                for obj in page.get("Contents", []):
                    s3.delete_object(Bucket=self.bucket, Key=obj["Key"])
            s3.delete_bucket(Bucket=self.bucket)
        for name in getattr(self, "_functions", []):
            self.lam.delete_function(FunctionName=name)
        if getattr(self, "_role", None):
            self.iam.delete_role(RoleName=self._role)

    def _create_resources(self, template: dict[str, Any]) -> None:
        import boto3

        iam: Any = boto3.client("iam")
        lam: Any = boto3.client("lambda")
        s3: Any = boto3.client("s3")
        sfn: Any = boto3.client("stepfunctions")
        self.iam: Any = iam
        self.lam: Any = lam
        self.s3: Any = s3
        self.sfn: Any = sfn
        suffix = uuid.uuid4().hex[:8]  # unique per runtime: moto's state is process-global
        self.bucket: str = f"{BUCKET}-{suffix}"
        s3.create_bucket(Bucket=self.bucket)
        self._role = f"elsai-local-{suffix}"
        role = iam.create_role(RoleName=self._role, AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        zipped = io.BytesIO()
        with zipfile.ZipFile(zipped, "w") as archive:
            archive.writestr(
                "agent_handler.py", "# the real code runs in a child process; see elsai/local\n"
            )
        self._functions: list[str] = []
        self.agent_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{AGENT_FUNCTION}"
        self.definition: dict[str, Any] = self._definition("1")
        _, machine_props = resource(template, "AWS::StepFunctions::StateMachine", "Jobs")
        machine = sfn.create_state_machine(
            name=machine_props.get("StateMachineName", "elsai-jobs"), definition=json.dumps(self.definition),
            roleArn=role, type=machine_props.get("StateMachineType", "STANDARD"),
        )  # fmt: skip
        self.state_machine_arn: str = machine["stateMachineArn"]
        # The tenant role (isolation on): moto's STS hands out credentials for the local role,
        # narrowed by the same per-job session policy a deployed slice assumes it with.
        refs = {"SessionsBucket": self.bucket, "JobsStateMachine": self.state_machine_arn,
                "TenantRole": role, "CurrentVersion": f"{self.agent_arn}:1"}  # fmt: skip
        self.agent_env: dict[str, str] = function_environment(template, "AgentFunction", refs)
        self.api_env: dict[str, str] = function_environment(template, "ApiFunction", refs)
        _, agent_props = resource(template, "AWS::Lambda::Function", "AgentFunction")
        self.template_timeout_s: float = float(agent_props.get("Timeout", 900))
        self.memory_mb: int = int(agent_props.get("MemorySize", 1024))
        for name, handler, env in (
            (AGENT_FUNCTION, handler_name("agent"), self.agent_env),
            (API_FUNCTION, handler_name("api"), self.api_env),
        ):
            lam.create_function(
                FunctionName=name, Runtime="python3.12", Role=role, Handler=handler, Code={"ZipFile": zipped.getvalue()},
                Timeout=int(self.template_timeout_s), Environment={"Variables": env},
            )  # fmt: skip
            self._functions.append(name)
        self._setenv({k: v for k, v in self.api_env.items() if k.startswith("ELSAI_")})
        assert self._workdir is not None
        self.deploys: Deploys = Deploys(Path(self._workdir.name) / "deploys", AGENT_FUNCTION, lam)
        self.deploy()

    # -- the Lambda seam -------------------------------------------------------------------

    def _invoke(
        self, function_name: str, qualifier: Any, body: Any, response_headers: dict[str, str]
    ) -> bytes:
        name = function_name.rsplit(":function:", 1)[-1].split(":", 1)[0]
        try:
            if name != AGENT_FUNCTION:
                raise LookupError(f"no local function {name!r}")
            deploy = self.deploys.for_arn(function_name, qualifier)
        except LookupError as exc:
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": "ResourceNotFound", "errorMessage": str(exc)}).encode()
        event = json.loads(body)
        info = self._info(event)
        fault = self.faults(info) if self.faults else None
        timeout_s = (
            (fault.timeout_seconds if fault and fault.timeout_seconds is not None else None)
            or self.function_timeout_s
            or self.template_timeout_s
        )
        record = InvocationRecord(info=info, event=event, fault=fault, request_id=str(uuid.uuid4()),
                                  version=deploy.version)  # fmt: skip
        with self._lock:
            self.invocations.append(record)
        self.progress.invocation_started(record)
        try:
            run_child(record, cwd=self.project, env=self._child_env(record, deploy, timeout_s), timeout_s=timeout_s,
                      on_child_event=lambda data: self.progress.child_event(record, data), zygote=self._zygote)  # fmt: skip
        except (
            Exception
        ) as exc:  # a bug of this runtime, not of the handler: say so in the error name
            record.error = {
                "errorType": "LocalRuntimeError",
                "errorMessage": f"{type(exc).__name__}: {exc}",
            }
        self.progress.invocation_ended(record)
        if record.error is not None:
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps(record.error).encode()
        return json.dumps(record.result).encode()

    def _info(self, event: dict[str, Any]) -> InvocationInfo:
        job_id, action = str(event.get("job_id", "?")), str(event.get("action", RUN_SLICE))
        node = event.get("node")  # a Graph/Swarm node slice: attempts count per node
        with self._lock:
            if action == RUN_SLICE:
                self._last_slice[job_id] = int(event.get("slice", 0))
            slice_no = int(event.get("slice", 0)) if node else self._last_slice.get(job_id, 0)
            key = (job_id, f"{action}:{node}" if node else action, slice_no)
            self._attempts[key] = attempt = self._attempts.get(key, 0) + 1
        runs = sum(1 for line in self.ledger() if line.get("job_id") == job_id)
        return InvocationInfo(
            job_id,
            str(event.get("session_id", "")),
            str(node or event.get("agent_id", "")),
            action,
            slice_no,
            attempt,
            runs,
        )

    def _child_pythonpath(self, deploy: Deploy | None) -> str:
        """The deploy's snapshot of the code (as the bundle holds it), then PYTHONPATH."""
        inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        return os.pathsep.join([*(deploy.pythonpath if deploy else ()), *inherited])

    def _child_env(
        self, record: InvocationRecord, deploy: Deploy, timeout_s: float
    ) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _ENDPOINT_VARS}
        env.update(self.agent_env)
        env.update({
            "ELSAI_AGENT_FACTORY": "elsai.local.instrument:instrumented_factory",
            "ELSAI_LOCAL_USER_FACTORY": deploy.agent_factory or self.agent_env.get("ELSAI_AGENT_FACTORY", ""),
            "ELSAI_LOCAL_FUNCTION_NAME": AGENT_FUNCTION, "ELSAI_LOCAL_TIMEOUT_MS": str(int(timeout_s * 1000)),
            "ELSAI_LOCAL_MEMORY_MB": str(self.memory_mb), "ELSAI_LOCAL_REQUEST_ID": record.request_id,
            "ELSAI_LOCAL_LEDGER": str(self.ledger_path), FAULT_ENV: record.fault.to_env() if record.fault else "",
            "ELSAI_LOCAL_INVOCATION": json.dumps({"job_id": record.info.job_id, "slice": record.info.slice, "attempt": record.info.attempt, "agent_id": record.info.agent_id, "action": record.info.action}),
            "PYTHONPATH": self._child_pythonpath(deploy),
            "PYTHONUNBUFFERED": "1",
        })  # fmt: skip
        if self.safety_margin_ms is not None:
            env["ELSAI_SLICE_SAFETY_MARGIN_MS"] = str(self.safety_margin_ms)
        # The deployed function says ELSAI_MODEL=bedrock; locally the scripted model is the
        # default and Bedrock needs real credentials (below).
        env["ELSAI_MODEL"] = "scripted"
        env.update(self.child_env)
        if self.bedrock_credentials is None:
            env["AWS_ENDPOINT_URL"] = self.endpoint
        else:  # Bedrock is real AWS; everything the runtime provides stays on moto
            env.update({"AWS_ENDPOINT_URL_S3": self.endpoint, "AWS_ENDPOINT_URL_SFN": self.endpoint,
                        "AWS_ENDPOINT_URL_LAMBDA": self.endpoint, "ELSAI_MODEL": "bedrock"})  # fmt: skip
            env.update(self.bedrock_credentials)
            if not self.bedrock_credentials.get("AWS_SESSION_TOKEN"):
                env.pop("AWS_SESSION_TOKEN", None)
        return env
