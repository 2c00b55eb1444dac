"""The default service template the wheel ships is what elsai's construct synthesizes today.

`elsai local run --agent-factory ...` outside a CDK app runs it (elsai/cdk/default_app.py says
why it is shipped rather than synthesized on the user's machine); `make default-template`
regenerates it when this test fails.
"""

from __future__ import annotations

from elsai.cdk.default_app import TARGET, default_template, render


def test_the_shipped_default_template_is_not_stale() -> None:
    fresh = render(default_template())
    assert TARGET.read_text() == fresh, "stale: run `make default-template` and commit the file"
