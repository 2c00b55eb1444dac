"""CDK infrastructure for the elsai serverless runtime.

Kept outside the ``elsai`` package on purpose: ``import elsai`` must never pull in
aws-cdk-lib (hundreds of MB, a node process). Entry point: ``python3 -m infra.app``.
"""
