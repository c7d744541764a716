"""Types every layer shares: the rubric and its scale specs, the enums, the blind views a reviewer's page gets,
the typed report, comparison and history results, input rules, automatic checks, keyed randomness, and
the lazy package surface every service package's ``__init__`` uses (``lazy_names``).

This package imports nothing of ours, so the statistics (``analysis``), the services and the pages can all
depend on it without depending on each other. It is a vocabulary rather than a service: its surface is per
module, each module's ``__all__`` (checked by ``tests/test_public_surfaces.py``), and one imports a type from
its module, ``from reviewer_app.domain.rubric import Rubric``.
"""
