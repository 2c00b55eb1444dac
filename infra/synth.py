"""Synthesis helpers for other tests and local tooling of this repository's stack.

``synth_template`` gives the CloudFormation template without the CDK CLI; the ASL resolver
(``state_machine_definition``) lives with the local runtime that needs it.
"""

from __future__ import annotations

from typing import Any


def synth_template(context: dict[str, Any] | None = None, *, nag: bool = True) -> dict[str, Any]:
    """The ElsaiStack template as a dict (runs the same nag checks as ``cdk synth``)."""
    from infra.app import build_app  # imported lazily: aws-cdk-lib is slow to load

    app, stack = build_app(context, nag=nag)
    assembly = app.synth()
    return dict(assembly.get_stack_by_name(stack.stack_name).template)
