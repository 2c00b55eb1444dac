"""This repository's CDK app and tooling around it (synth, checks, the local runtime).

The runtime itself is the construct library ``elsai.cdk`` (``DurableAgentService``); ``import
elsai`` never imports it, so aws-cdk-lib (hundreds of MB, a node process) stays out of the SDK.
Entry point: ``python3 -m infra.app``.
"""
