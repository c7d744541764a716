"""The ``blind-review`` console script: parse the arguments, call one service, print one line."""

from reviewer_app.cli.main import main

__all__ = ["main"]
