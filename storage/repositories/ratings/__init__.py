"""Ratings files: the bulk writes of an import (``imports``), which item a row names (``items``) and the
unblinded export (``exports``)."""
