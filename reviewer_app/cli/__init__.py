"""The ``blind-review`` console script (``reviewer_app.cli.main:main``): parse the arguments, call one service,
print one line. One module per command group (``main`` holds the core commands and registers the others),
``_common`` for what they share. This ``__init__`` imports nothing, so importing a command module never runs
``main`` (which would make a circle of the two)."""
