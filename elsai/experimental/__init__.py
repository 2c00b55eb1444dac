"""Experimental APIs. Nothing here is a second home of a stable feature."""
