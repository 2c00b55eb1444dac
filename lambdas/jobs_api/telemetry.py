"""One Logger and one Tracer for every module of the jobs API."""

from aws_lambda_powertools import Logger

from elsai_lambdas.xray_tracing import LazyTracer

logger = Logger()
tracer = LazyTracer()  # the X-Ray SDK is imported only when tracing is on (xray_tracing.py)
