"""The choices of ``export-preferences``, apart from the export itself so that the CLI's parser (built for every
command, ``--help`` included) reads them without loading pandas and pyarrow."""

from __future__ import annotations

PREFERENCE_FORMATS = ("jsonl", "parquet", "hf")  # hf: a folder Hugging Face `datasets` loads (hf_folder.py)
TIE_RULES = ("leave-out", "mark")
SOURCES = ("pairwise", "ratings")  # where a record's verdict comes from: the batch's mode
PREFERENCE_SOURCES = ("auto", *SOURCES)
