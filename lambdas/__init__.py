"""elsai's Lambda handlers, installed as the ``elsai_lambdas`` package (source: ``lambdas/``).

``agent_handler`` runs job slices, ``api_handler`` serves the jobs API (the ``jobs_api``
package), ``sweeper`` applies session retention. They are the only code that imports
Powertools; the CDK constructs name them by module path (``elsai.serverless.contract``).
"""
