"""The storage layout: where every file of a session lives, and the records stored there.

Pure data (keys and pydantic records); no I/O, so every other part of elsai.session can use it.
"""
