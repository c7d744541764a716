"""Renderers only: the typed report (``formats`` for JSON, CSV and Markdown, ``html``), a comparison
(``compare``), a model's history (``history``) and the production monitor (``monitor``), with the sections they
share (``benchmarks``, ``checks``, ``comments``) and ``markdown_safety``; ``schema.json`` is the published JSON
contract the report's types mirror. They take ``domain`` results and read nothing. The surface is per module,
each module's ``__all__`` (one renderer module per result, whose names, such as ``FORMATS`` and ``headline``,
repeat from module to module).
"""
