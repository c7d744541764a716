"""The REST API's ASGI app, served at ``/api/v1`` by the same ``blind-review serve`` process as the pages.

FastAPI, because the OpenAPI document is then made from the handlers' own types (Pydantic models and
annotated parameters) instead of a second description kept by hand beside them, and parameters are checked
against the same types; its docs page is served from files installed with the package (``fastapi-offline``:
Swagger UI, no CDN), since a team's server may have no internet and the Content-Security-Policy allows
scripts from the app's own origin only.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from sqlalchemy.engine import Engine
from starlette.routing import Mount

from reviewer_app.api.problems import install_handlers
from reviewer_app.api.routes import batches, judges, people, production, results, webhooks

__all__ = ["API_PREFIX", "api_route", "create_api"]

API_PREFIX = "/api/v1"

DESCRIPTION = """\
Blind Review for pipelines: load batches, add people, assign, import ratings, read reports, export ratings
and preferences, compare versions, run an LLM judge, send production feedback.

**Auth.** `Authorization: Bearer <token>`; an admin makes a token with `blind-review api-token NAME`. A
lead's token reads results; an admin's also loads and manages. There is nothing here for reviewers: the API
shows model names, and no endpoint serves review items.

**Errors** are problem details (RFC 9457, `application/problem+json`): `detail` is the message the CLI would
print; a file or argument that cannot be used also has `errors`, one per problem, each with `file`, `line`,
`field` and `message`.
"""


def create_api(engine: Engine) -> FastAPI:
    """The API over ``engine``: mount it at :data:`API_PREFIX` (``reviewer_app/ui/server.py`` does)."""
    app = FastAPIOffline(
        title="Blind Review API",
        version="1",
        description=DESCRIPTION,
        docs_url="/docs",
        redoc_url=None,
        static_url="/docs-static",
        # One fixed version in the path (/api/v1): a breaking change is a /api/v2 beside it.
        servers=[{"url": API_PREFIX}],
    )
    app.state.engine = engine
    install_handlers(app)
    for module in (batches, results, judges, production, people, webhooks):
        app.include_router(module.router)
    return app


def api_route(engine: Engine) -> Mount:
    """The API over ``engine`` at :data:`API_PREFIX`, as a route of a bigger app (the pages' ``st.App``)."""
    return Mount(API_PREFIX, app=create_api(engine))
