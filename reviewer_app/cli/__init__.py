"""The ``blind-review`` console script (``reviewer_app.cli.main:main``): parse the arguments, call one service,
print what came of it. One module per command group, each with a ``register(subparsers)`` that adds its
commands through ``_common.add_command``; ``main`` registers the groups in the order of ``--help`` and defines
no command itself; ``_common`` holds what they share (adding a command, its error handling, opening the
database, printing). This ``__init__`` imports nothing, so importing a command module never runs ``main``."""
