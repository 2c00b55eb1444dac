"""Fixtures for session storage tests: each backend contract test runs on files and on S3.

The moto server, AWS environment and bucket fixtures come from tests/conftest.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elsai.session.storage import FileStorage, S3Storage, StorageBackend


@pytest.fixture(params=["file", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> StorageBackend:
    """Each contract test runs once per backend."""
    if request.param == "file":
        return FileStorage(tmp_path / "store")
    bucket = request.getfixturevalue("s3_bucket")
    return S3Storage(bucket)
