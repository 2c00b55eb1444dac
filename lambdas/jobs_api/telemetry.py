"""One Logger and one Tracer for every module of the jobs API."""

from aws_lambda_powertools import Logger, Tracer

logger = Logger()
tracer = Tracer()
