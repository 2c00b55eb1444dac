"""Package layout that pyproject.toml cannot express: the Lambda handlers ride in the wheel.

``lambdas/`` (the handlers) and ``locks/lambda-py312.txt`` stay where this repository keeps them
and ship inside the wheel as ``elsai/cdk/handlers/`` and ``elsai/cdk/locks/``, so
``elsai.cdk.DurableAgentService`` in a user's app bundles the same handlers with the same lock.
"""

from setuptools import find_packages, setup

HANDLERS = "elsai.cdk.handlers"
LOCKS = "elsai.cdk.locks"

setup(
    packages=[
        *find_packages(include=["elsai", "elsai.*"]),
        HANDLERS,
        *(f"{HANDLERS}.{name}" for name in find_packages("lambdas")),
        LOCKS,
    ],
    package_dir={HANDLERS: "lambdas", LOCKS: "locks"},
    package_data={HANDLERS: ["requirements.txt"], LOCKS: ["lambda-py312.txt"]},
    exclude_package_data={LOCKS: ["dev.txt"]},
)
