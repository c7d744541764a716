"""The REST API at ``/api/v1`` (issue 31): a front end like the CLI and the pages, over the same services.

Handlers only parse, call one public service function and shape its answer; nothing here decides anything a
service does not decide for the CLI too.
"""

from __future__ import annotations

from reviewer_app.api.app import API_PREFIX, api_route, create_api

__all__ = ["API_PREFIX", "api_route", "create_api"]
