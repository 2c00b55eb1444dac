"""The read path: loading an agent's conversation window, with segments as an accelerator."""
