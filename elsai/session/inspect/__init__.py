"""Read-only views of a stored session for operators, the CLI and the jobs API.

Never writes and never imports elsai.session.write, so it is safe beside a live writer.
"""
