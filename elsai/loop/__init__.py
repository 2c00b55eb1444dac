"""The ReAct loop, below `elsai.agent` and above sessions, checkpoints, hooks and tools.

Modules: the cycle (`loop`), one model turn (`model_call`), tool batches (`tool_runner`), the
one transcript path (`transcript`), and the narrow persistence interface it talks to. The
agent hands it a `LoopDeps` for each invocation.
"""
