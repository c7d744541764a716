"""Batches: reading and checking files, the rubric file, loading, uploads, follow-ups, titles, the leak scan
(its words, list and masks), archive and delete, output files. Its surface is what the pages, the CLI and the
other services call; the readers and checkers behind it are its own.
"""

from reviewer_app.batches.admin import (
    BatchRow,
    TitleRow,
    archive_batch,
    assign_defaults,
    batch_table,
    batch_titles,
    delete_batch,
    preview_assign,
    restore_batch,
    set_titles,
)
from reviewer_app.batches.catalog import batch_rubric, find_batch, list_batches, no_such_batch, set_batch_open
from reviewer_app.batches.follow_up import DEFAULT_ANCHOR_SHARE
from reviewer_app.batches.images import image_path
from reviewer_app.batches.leak_list import batch_leaks, leaks_for, write_leaks
from reviewer_app.batches.loading import load_batch
from reviewer_app.batches.output_files import file_stem, write_rendered
from reviewer_app.batches.rubric_file import parse_rubric_text
from reviewer_app.batches.titles import batch_title_in, scenario_title_in
from reviewer_app.batches.uploads import UPLOAD_TYPES, Upload, load_uploads

__all__ = [
    "BatchRow",
    "DEFAULT_ANCHOR_SHARE",
    "TitleRow",
    "UPLOAD_TYPES",
    "Upload",
    "archive_batch",
    "assign_defaults",
    "batch_leaks",
    "batch_rubric",
    "batch_table",
    "batch_title_in",
    "batch_titles",
    "delete_batch",
    "file_stem",
    "find_batch",
    "image_path",
    "leaks_for",
    "list_batches",
    "load_batch",
    "load_uploads",
    "no_such_batch",
    "parse_rubric_text",
    "preview_assign",
    "restore_batch",
    "scenario_title_in",
    "set_batch_open",
    "set_titles",
    "write_leaks",
    "write_rendered",
]
