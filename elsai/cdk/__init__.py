"""One construct per concern: storage, functions, state machine, API."""
