"""The project's own demo: a small fictional batch (see ``make_files.py``) and :func:`seed.seed_demo`."""
