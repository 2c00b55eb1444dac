"""moto evaluates a role's own policies but not the session policy of AssumeRole(Policy=...).

AWS grants an assumed-role session the intersection of both. This fixture adds that missing
half to moto's own request check: after moto's evaluation of the role's policies passes, the
session policy passed to AssumeRole must permit the action too, judged by moto's own policy
engine (`IAMPolicy`). Nothing else about moto changes, so a session policy that is too broad
lets the request through and the tests that rely on it fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def session_policies_enforced(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from moto.iam import access_control as ac
    from moto.sts.models import sts_backends

    original = ac.IAMRequestBase.check_action_permitted

    def check(self: Any, resource: str) -> None:
        original(self, resource)
        key = self._access_key
        if not isinstance(key, ac.AssumedRoleAccessKey):
            return
        roles = sts_backends[key.account_id][key.partition].assumed_roles
        policy = next((r.policy for r in roles if r.access_key_id == key._access_key_id), None)
        if policy and ac.IAMPolicy(policy).is_action_permitted(self._action, resource) != (
            ac.PermissionResult.PERMITTED
        ):
            self._raise_access_denied()

    monkeypatch.setattr(ac.IAMRequestBase, "check_action_permitted", check)
    yield
