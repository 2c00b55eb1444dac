"""Write the synthesized state machine definitions for the conformance engine (main venv).

``python -m tests.system.conformance.export_definitions build/conformance`` writes
``default.asl.json`` (cdk.json's settings) and ``small.asl.json`` (tiny budgets and waits,
two slices per execution), both resolved to plain ASL exactly as ``cdk synth`` makes them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from elsai.local.definition import state_machine_definition
from infra.synth import synth_template

ACCOUNT = "000000000000"
REGION = "us-east-1"
AGENT_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:elsai-agent"
CONTEXTS: dict[str, dict[str, object]] = {
    "default": {},
    "small": {
        "maxSlices": 5,
        "maxModelCalls": 4,
        "slicesPerExecution": 2,
        "interruptWaitSeconds": 2,
    },
}


def main(outdir: str) -> None:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for name, context in CONTEXTS.items():
        template = synth_template(context)
        definition = state_machine_definition(
            template, {"AgentFunction": AGENT_ARN}, pseudo={"AWS::AccountId": ACCOUNT}
        )
        (out / f"{name}.asl.json").write_text(json.dumps(definition, indent=1))
        print(f"wrote {out / f'{name}.asl.json'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/conformance")
