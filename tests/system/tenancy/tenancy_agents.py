"""An agent whose tool uses boto3 with the ambient credentials, as a talked-into tool would.

The scripted model asks the tool for each (operation, key) in ``TENANCY_PROBES`` (JSON), one
call per turn, then ends its turn. `RESULTS` keeps what the tool saw, in call order.
"""

from __future__ import annotations

import json
import os
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel

RESULTS: list[str] = []


@tool
def s3_object(operation: str, key: str) -> str:
    """Read ("get"), overwrite ("put") an object of the sessions bucket, or "list" a prefix.

    Args:
        operation: "get", "put" or "list".
        key: The object key (the prefix, for "list").
    """
    import boto3
    from botocore.exceptions import ClientError

    client = boto3.client("s3")  # the ambient credentials: env vars / default session
    bucket = os.environ["ELSAI_SESSIONS_BUCKET"]
    try:
        if operation == "put":
            client.put_object(Bucket=bucket, Key=key, Body=b"overwritten by a tool")
            out = "written"
        elif operation == "list":
            listed = client.list_objects_v2(Bucket=bucket, Prefix=key).get("Contents", [])
            out = "listed: " + ",".join(sorted(o["Key"] for o in listed))
        else:
            out = client.get_object(Bucket=bucket, Key=key)["Body"].read().decode()[:40]
    except ClientError as exc:
        out = "refused: " + str(exc.response.get("Error", {}).get("Code"))
    RESULTS.append(out)
    return out


def build_agent(config: AgentConfig) -> Agent:
    probes: list[list[str]] = json.loads(os.environ.get("TENANCY_PROBES", "[]"))
    script: list[Any] = [
        {
            "role": "assistant",
            "content": [
                {
                    "toolUse": {
                        "toolUseId": f"probe-{i}",
                        "name": "s3_object",
                        "input": {"operation": op, "key": key},
                    }
                }  # fmt: skip
            ],
        }
        for i, (op, key) in enumerate(probes)
    ]
    return Agent(model=ScriptedModel([*script, "done"]), tools=[s3_object], config=config)
