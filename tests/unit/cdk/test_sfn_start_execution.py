"""The local runtime's rename for moto's states:startExecution task: nestable, and undone."""

from __future__ import annotations

from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
    state_task_service_sfn,
)

from elsai.local.sfn_start_execution import botocore_names_for_start_execution

SERVICE = state_task_service_sfn.StateTaskServiceSfn


def test_nested_holders_install_once_and_the_last_one_out_restores_moto() -> None:
    moto_own = SERVICE.__dict__["_normalise_parameters"]
    with botocore_names_for_start_execution():
        installed = SERVICE.__dict__["_normalise_parameters"]
        assert installed is not moto_own
        with botocore_names_for_start_execution():
            assert SERVICE.__dict__["_normalise_parameters"] is installed
        assert SERVICE.__dict__["_normalise_parameters"] is installed  # the outer holder still runs
    assert SERVICE.__dict__["_normalise_parameters"] is moto_own
