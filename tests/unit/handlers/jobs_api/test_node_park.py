"""The agent handler's park step, for a node of a Graph/Swarm job: the node's own record."""

from __future__ import annotations

import json

import boto3
from moto import mock_aws

from elsai.session.layout import keys
from tests.unit.handlers.jobs_api.helpers import BUCKET, REGION, FakeContext

ASK = {"id": "i1", "name": "approve", "reason": {"amount": 40}, "tool_use_id": "t1"}


def _park(node: str | None, token: str) -> dict[str, object]:
    from elsai_lambdas import agent_handler

    event = {"action": "park", "task_token": token, "job_id": "job-1", "session_id": "s1",
             "agent_id": "graph", "interrupts": [ASK], **({"node": node} if node else {})}  # fmt: skip
    return dict(agent_handler.handler(event, FakeContext(function_name="elsai-agent")))


def test_a_node_parks_under_its_own_key_and_the_job_wait_keeps_its_own(aws_env: None) -> None:
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        assert _park("review_a", "token-a") == {"parked": True}
        assert _park(None, "token-job") == {"parked": True}

        def read(key: str) -> dict[str, object]:
            return dict(json.loads(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()))

        node_wait = read(keys.node_wait_key("job-1", "review_a"))
        assert (node_wait["node"], node_wait["task_token"]) == ("review_a", "token-a")
        assert node_wait["interrupts"] == [{**ASK, "node": "review_a"}]
        job_wait = read(keys.job_token_key("job-1"))
        assert (job_wait["node"], job_wait["task_token"]) == (None, "token-job")
