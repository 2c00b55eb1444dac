"""Deploys of the local runtime: each one an immutable snapshot of the agent's code, as a version.

On AWS every deploy that changes the agent function publishes a new version, and a job runs
on the version it started on (elsai/cdk/pinning.py). Locally a deploy copies the agent's
code (the service's code paths and the runtime's ``pythonpath`` folders) into a folder of its
own under the runtime's work directory, publishes a version of the moto function, and from
then on an invocation of that qualified ARN runs a child whose import path is that snapshot:
editing the sources afterwards changes only what the next deploy snapshots.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elsai.local.services import SynthesizedService
from elsai.serverless.contract import CURRENT_VERSION_ENV, version_of

_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")


class UnknownVersionError(LookupError):
    """An invocation named a version no deploy published (or the bare function)."""


@dataclass(frozen=True)
class Deploy:
    """One published version: its number, qualified ARN, factory and code snapshot."""

    version: str
    arn: str
    agent_factory: str | None
    pythonpath: tuple[str, ...]


class Deploys:
    """The versions published so far, by number; ``current`` is the last one."""

    def __init__(self, root: Path, function_name: str, lambda_client: Any) -> None:
        self._root = root
        self._name = function_name
        self._lam = lambda_client
        self._by_version: dict[str, Deploy] = {}
        self.current: Deploy | None = None

    def publish(
        self, agent_factory: str | None, modules: list[Path], folders: list[Path]
    ) -> Deploy:
        """Snapshot the code, publish a version, make it current.

        ``modules``: the service's code paths (modules or packages, kept by name in one
        folder, as the bundle holds them); ``folders``: import-path folders, copied whole.
        As on AWS, unchanged code and factory publish nothing new: the last version stays.
        """
        staging = self._root / f"staging-{len(self._by_version)}"
        code = staging / "code"
        code.mkdir(parents=True)
        for module in modules:
            if module.is_dir():
                shutil.copytree(module, code / module.name, ignore=_IGNORED)
            else:
                shutil.copy2(module, code / module.name)
        for index, source in enumerate(folders):
            shutil.copytree(source, staging / f"path{index}", ignore=_IGNORED)
        self._lam.update_function_code(
            FunctionName=self._name, ZipFile=_bundle(staging, agent_factory)
        )
        published = self._lam.publish_version(FunctionName=self._name)
        version = str(published["Version"])
        if version in self._by_version:  # nothing changed since that deploy
            shutil.rmtree(staging)
            self.current = self._by_version[version]
            return self.current
        folder = self._root / f"v{version}"
        staging.rename(folder)
        _read_only(folder)
        paths = [folder / "code", *(folder / f"path{i}" for i in range(len(folders)))]
        deploy = Deploy(version, str(published["FunctionArn"]), agent_factory,
                        tuple(map(str, paths)))  # fmt: skip
        self._by_version[version] = deploy
        self.current = deploy
        return deploy

    def for_arn(self, function_name: str, qualifier: str | None) -> Deploy:
        """The deploy an invocation of ``function_name`` (and ``qualifier``) runs."""
        version = qualifier or version_of(function_name)
        deploy = self._by_version.get(version)
        if deploy is None:
            raise UnknownVersionError(
                f"no published version {version!r} of {self._name} "
                f"(published: {sorted(self._by_version, key=int)})"
            )
        return deploy

    def versions(self) -> list[str]:
        """The published version numbers, oldest first."""
        return sorted(self._by_version, key=int)


class DeployMixin:
    """``deploy()`` of the local runtime; needs the runtime's service, clients and settings."""

    service: SynthesizedService | None
    agent_factory: str | None
    pythonpath: tuple[str, ...]
    fast_retries: bool
    agent_arn: str
    state_machine_arn: str
    sfn: Any
    api_env: dict[str, str]
    deploys: Deploys
    definition: dict[str, Any]

    def _setenv(self, values: dict[str, str | None]) -> None:
        raise NotImplementedError

    def _definition(self, version: str) -> dict[str, Any]:
        """The template's machine, pinning jobs started without a version to ``version``."""
        from elsai.local.definition import state_machine_definition
        from elsai.local.template import fast_retries

        assert self.service is not None
        arns = {"AgentFunction": self.agent_arn}
        definition = state_machine_definition(self.service.template, arns, version=version)
        return fast_retries(definition) if self.fast_retries else definition

    def deploy(self, agent_factory: str | None = None) -> Deploy:
        """Deploy the agent's code as it is now: a new version, which new jobs start on.

        Jobs already running keep the version they started on. ``agent_factory`` replaces
        the factory from this deploy on (default: the runtime's).
        """
        if agent_factory is not None:
            self.agent_factory = agent_factory
        code = list(self.service.code) if self.service else []
        deploy = self.deploys.publish(self.agent_factory, code, [Path(p) for p in self.pythonpath])
        self.definition = self._definition(deploy.version)
        self.sfn.update_state_machine(
            stateMachineArn=self.state_machine_arn, definition=json.dumps(self.definition)
        )
        self.api_env[CURRENT_VERSION_ENV] = deploy.arn
        self._setenv({CURRENT_VERSION_ENV: deploy.arn})
        return deploy


def _bundle(folder: Path, agent_factory: str | None) -> bytes:
    """What the moto function's code is: a digest of the snapshot (the agent runs from disk)."""
    digest = hashlib.sha256(str(agent_factory).encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("snapshot.txt", f"{digest.hexdigest()}\n")
    return zipped.getvalue()


def _read_only(folder: Path) -> None:
    """Files of a snapshot cannot be edited in place (folders stay writable for cleanup)."""
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
