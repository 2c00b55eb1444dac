"""The agents of the hello-service example (bundled into the Lambda by DurableAgentService)."""
