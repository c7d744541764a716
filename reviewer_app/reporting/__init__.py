"""Rendering the typed report (``reviewer_app.domain.report``): JSON, CSV and Markdown in ``formats``, HTML in
``html``; ``schema.json`` is the published JSON contract the types mirror."""
