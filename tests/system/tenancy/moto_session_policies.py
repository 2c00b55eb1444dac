"""The half of IAM that moto leaves out for assumed roles: session policies, with conditions.

AWS grants an assumed-role session the intersection of the role's policies and the session
policy passed to AssumeRole(Policy=...). moto evaluates only the role's policies, and its own
policy engine ignores the request context (a Condition on ``s3:prefix`` can never hold in it).
This fixture adds both to moto's request check, after moto's own evaluation passed:

- the session policy must allow the request, judged by `evaluate` below: Action/NotAction,
  Resource, and the condition operators ``StringEquals`` / ``StringLike`` (and their ``Not``
  forms) on the request's context keys; any other operator fails the test loudly instead of
  being skipped, so a policy this evaluator cannot judge never passes by accident;
- S3's rule for missing keys: a GetObject of a key that does not exist is answered 404 only
  to a caller allowed ``s3:ListBucket`` on the bucket *in the GetObject's own context*, which
  has no ``s3:prefix``; to anyone else it is 403 (moto always says 404).

What was checked against the IAM policy language reference (docs/threat-model.md): an Allow
with a condition on a key the request does not carry does not apply; ``*`` / ``?`` are
wildcards in ``StringLike`` and in resources, ``${*}``, ``${?}``, ``${$}`` their literal
forms; actions match case-insensitively, resources and ``StringLike`` values case-sensitively;
an explicit Deny wins; no matching Allow means deny.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

_LITERALS = {"${*}": r"\*", "${?}": r"\?", "${$}": r"\$"}
_TOKEN = re.compile(r"\$\{[*?$]\}|\*|\?|[^*?$]+|\$")


def _pattern(text: str) -> re.Pattern[str]:
    """An IAM wildcard pattern as a regex (``*``, ``?``; ``${*}`` etc. are literal)."""
    parts = []
    for token in _TOKEN.findall(text):
        if token in _LITERALS:
            parts.append(_LITERALS[token])
        elif token == "*":
            parts.append(".*")
        elif token == "?":
            parts.append(".")
        else:
            parts.append(re.escape(token))
    return re.compile("^" + "".join(parts) + "$", re.DOTALL)


def _listify(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _matches(patterns: Any, value: str, *, ignore_case: bool = False) -> bool:
    if ignore_case:
        return any(_pattern(str(p).lower()).match(value.lower()) for p in _listify(patterns))
    return any(_pattern(str(p)).match(value) for p in _listify(patterns))


def _condition_holds(operator: str, key: str, wanted: Any, context: dict[str, str]) -> bool:
    negated = operator.startswith("StringNot")
    base = operator.replace("StringNot", "String")
    if base not in ("StringEquals", "StringLike"):
        raise AssertionError(f"the test's policy evaluator does not know {operator}: extend it")
    if key not in context:
        return negated  # a condition on a key the request lacks: only a Not form can hold
    actual = context[key]
    if base == "StringLike":
        found = _matches(wanted, actual)
    else:
        found = actual in [str(w) for w in _listify(wanted)]
    return found != negated


def _statement_applies(stmt: dict[str, Any], action: str, resource: str,
                       context: dict[str, str]) -> bool:  # fmt: skip
    if "NotAction" in stmt:
        if _matches(stmt["NotAction"], action, ignore_case=True):
            return False
    elif not _matches(stmt["Action"], action, ignore_case=True):
        return False
    if "NotResource" in stmt:
        if _matches(stmt["NotResource"], resource):
            return False
    elif not _matches(stmt.get("Resource", "*"), resource):
        return False
    for operator, pairs in stmt.get("Condition", {}).items():
        for key, wanted in pairs.items():
            if not _condition_holds(operator, key, wanted, context):
                return False
    return True


def evaluate(policy: dict[str, Any], action: str, resource: str,
             context: dict[str, str] | None = None) -> bool:  # fmt: skip
    """Whether `policy` allows `action` on `resource` in `context` (explicit Deny wins)."""
    allowed = False
    for stmt in _listify(policy["Statement"]):
        if _statement_applies(stmt, action, resource, context or {}):
            if stmt["Effect"] == "Deny":
                return False
            allowed = True
    return allowed


def _request_context(path: str) -> dict[str, str]:
    """The S3 condition keys this evaluator knows, from the request's query string."""
    query = parse_qs(urlsplit(path).query, keep_blank_values=True)
    return {"s3:prefix": query["prefix"][-1]} if "prefix" in query else {}


def _object_missing(account_id: str, partition: str, resource: str) -> bool:
    from moto.s3.models import s3_backends

    bucket, _, key = resource.split(":::", 1)[1].partition("/")
    try:
        return s3_backends[account_id][partition].get_object(bucket, key) is None
    except Exception:  # moto raises for a missing key or bucket
        return True


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
        text = next((r.policy for r in roles if r.access_key_id == key._access_key_id), None)
        if not text:
            return
        policy = json.loads(text)
        if not evaluate(policy, self._action, resource, _request_context(self._path)):
            self._raise_access_denied()
        if self._action == "s3:GetObject" and _object_missing(
            key.account_id, key.partition, resource
        ):
            bucket_arn = resource.split("/", 1)[0]
            if not evaluate(policy, "s3:ListBucket", bucket_arn, {}):
                self._raise_access_denied()  # S3: 403, not 404, to a caller that cannot list

    monkeypatch.setattr(ac.IAMRequestBase, "check_action_permitted", check)
    yield
