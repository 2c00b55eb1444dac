"""`elsai.session` knows sessions only: no job records, no owners, no tagging of job objects.

Jobs and tenants are the serverless runtime's (their keys: `elsai.serverless.contract.service_keys`);
the session store moves bytes under the session layout and tags a write only when its caller's
policy says so. The layers contract keeps `elsai.session` from importing that module; this test
keeps it from spelling those keys or names out itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SESSION = ROOT / "elsai" / "session"

#: Key folders of the service's records (a session key never contains them).
SERVICE_FOLDERS = ("jobs/", "owners/")
#: Names the service keys module owns.
SERVICE_NAMES = {
    "job_dir",
    "job_token_key",
    "job_answer_key",
    "job_version_key",
    "job_fingerprint_key",
    "job_cancel_key",
    "node_waits_key",
    "answers_prefix",
    "owner_tag",
    "owner_prefix",
    "split_owner",
    "JOBS_PREFIX",
    "OWNERS_PREFIX",
    "OWNER_TAG_CHARS",
    "EXPIRING_TAG",
    "object_tagging",
}


def service_mentions(source: str) -> list[str]:
    """Each string constant naming a service folder and each name the service keys own."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [
                f"{folder!r} in a string" for folder in SERVICE_FOLDERS if folder in node.value
            ]
        elif isinstance(node, ast.Name | ast.Attribute | ast.FunctionDef | ast.alias):
            name = {
                ast.Name: lambda n: n.id,
                ast.Attribute: lambda n: n.attr,
                ast.FunctionDef: lambda n: n.name,
                ast.alias: lambda n: n.asname or n.name.rpartition(".")[2],
            }[type(node)](node)
            if name in SERVICE_NAMES:
                found.append(f"the name {name}")
    return found


def test_the_session_package_mentions_no_job_or_owner_key() -> None:
    modules = sorted(SESSION.rglob("*.py"))
    assert len(modules) > 20  # the whole package is read
    mentions = {
        str(path.relative_to(ROOT)): found
        for path in modules
        if (found := service_mentions(path.read_text()))
    }
    assert mentions == {}


def test_the_check_sees_job_keys_owner_names_and_tagging() -> None:
    # What elsai/session/layout/keys.py held before the service's keys left it.
    before = """
def job_token_key(job_id: str) -> str:
    return f"jobs/{job_id}/task_token.json"

OWNERS_PREFIX = "owners/"

def object_tagging(key):
    return None
"""
    assert sorted(service_mentions(before)) == [
        "'jobs/' in a string",
        "'owners/' in a string",
        "the name OWNERS_PREFIX",
        "the name job_token_key",
        "the name object_tagging",
    ]
    assert service_mentions("from x import keys\nS3Storage(tagging=keys.object_tagging)\n")
    assert service_mentions("def session_key(s):\n    return f'session_{s}/session.json'\n") == []


def test_an_s3_session_store_tags_what_its_caller_policy_says(s3_bucket: str) -> None:
    """The seam the serverless layer uses: a tagging policy passed in, applied on writes."""
    import boto3

    from elsai.session import S3SessionManager

    asked: list[str] = []

    def policy(key: str) -> str | None:
        asked.append(key)
        return "kind=kept" if key.endswith("kept.json") else None

    tagged = S3SessionManager("s1", bucket=s3_bucket, prefix="p", tagging=policy)
    tagged.storage.create("x/kept.json", b"{}")
    tagged.storage.create("x/plain.json", b"{}")
    untagged = S3SessionManager("s1", bucket=s3_bucket, prefix="q")
    untagged.storage.create("x/kept.json", b"{}")
    s3 = boto3.client("s3")

    def tags(key: str) -> list[dict[str, str]]:
        return list(s3.get_object_tagging(Bucket=s3_bucket, Key=key)["TagSet"])

    assert asked == ["x/kept.json", "x/plain.json"]  # keys relative to the store's prefix
    assert tags("p/x/kept.json") == [{"Key": "kind", "Value": "kept"}]
    assert tags("p/x/plain.json") == []
    assert tags("q/x/kept.json") == []  # no policy: the store tags nothing
