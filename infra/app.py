"""CDK app entry point (``cdk.json``: ``python3 -m infra.app``; activate the venv first).

This repository's own stack is the construct library's ``DurableAgentService`` (elsai.cdk), built
from cdk.json context, with the example agents of ``examples/agents/`` as its code: one
implementation of the runtime.

``build_app`` is shared with the tests and ``infra.synth`` so that what they check is
exactly what ``cdk synth`` produces: same cdk.json context, same nag checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a script (python3 infra/app.py): infra/ itself would be sys.path[0] (its
    # modules shadowing top-level names) and the repo root missing. Use the repo root instead.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _root / "infra"]
    sys.path.insert(0, str(_root))

import aws_cdk as cdk  # noqa: E402
from constructs import Construct  # noqa: E402

from elsai.cdk.config import ElsaiConfig  # noqa: E402
from elsai.cdk.nag import enable_nag  # noqa: E402
from elsai.cdk.service import DurableAgentService  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
STACK_NAME = "ElsaiStack"
#: This repository's demo factories (cdk.json: agentFactory), bundled at the Lambda root.
EXAMPLE_CODE = tuple(sorted((REPO_ROOT / "examples" / "agents").glob("example_*.py")))


class ElsaiStack(cdk.Stack):
    """The stack holding one DurableAgentService.

    Its id is ``Default``, which CDK leaves out of logical ids and output names: the resources
    keep the names they had before the construct existed, so a redeploy replaces nothing.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: ElsaiConfig | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.service = DurableAgentService(self, "Default", code=EXAMPLE_CODE, config=config)
        self.config = self.service.config
        self.storage, self.agent, self.jobs = (
            self.service.storage,
            self.service.agent,
            self.service.jobs,
        )
        self.api, self.sweeper = self.service.api, self.service.sweeper
        self.tenant = self.service.tenant


def cdk_json_context(path: Path = REPO_ROOT / "cdk.json") -> dict[str, Any]:
    """The ``context`` block of cdk.json (the CLI passes it; library callers need it too)."""
    if not path.exists():
        return {}
    return dict(json.loads(path.read_text()).get("context", {}))


def build_app(
    context: dict[str, Any] | None = None,
    *,
    nag: bool = True,
    outdir: str | None = None,
) -> tuple[cdk.App, ElsaiStack]:
    """App + stack. ``context`` overrides cdk.json (and the CLI's ``-c``)."""
    app = cdk.App(
        context=cdk_json_context(),
        post_cli_context=dict(context or {}),
        outdir=outdir,
    )
    stack = ElsaiStack(
        app,
        str(app.node.try_get_context("stackName") or STACK_NAME),
        description="elsai durable agents: sessions bucket, agent Lambda, Step Functions, API",
    )
    if nag:
        enable_nag(app)
    return app, stack


def main() -> None:
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()
