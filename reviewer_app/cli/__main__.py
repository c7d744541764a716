"""``python -m reviewer_app.cli``: the same as the ``blind-review`` console script."""

import sys

from reviewer_app.cli.main import main

sys.exit(main())
