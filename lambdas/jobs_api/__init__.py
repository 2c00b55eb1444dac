"""The jobs REST API (API Gateway, IAM-authorised) in front of the Standard state machine.

`app` is the one resolver and its error mapping, `routes/` the HTTP contract per resource
(Powertools `Router`s), `jobs` the Step Functions job logic with no HTTP in it, and `aws`
the shared clients and configuration. `lambdas/api_handler.py` is the Lambda entry point.
"""
