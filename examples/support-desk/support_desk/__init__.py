"""The agents of the support-desk example (bundled into the Lambda by DurableAgentService)."""
