"""Batches: reading and checking files, the rubric file, loading, uploads, follow-ups, titles, the leak scan
(its words, list and masks), archive and delete, output files. Its surface is what the pages, the CLI and the
other services call; the readers and checkers behind it are its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer_app.domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from reviewer_app.batches.admin import (
        BatchRow,
        TitleRow,
        archive_batch,
        assign_defaults,
        batch_row,
        batch_table,
        batch_titles,
        delete_batch,
        preview_assign,
        restore_batch,
        set_titles,
    )
    from reviewer_app.batches.audience import batch_audience, open_to_reviewer, set_batch_reviewers
    from reviewer_app.batches.catalog import (
        batch_list,
        batch_rubric,
        find_batch,
        no_such_batch,
        set_batch_open,
    )
    from reviewer_app.batches.follow_up import DEFAULT_ANCHOR_SHARE
    from reviewer_app.batches.images import image_path
    from reviewer_app.batches.leak_list import batch_leaks, leaks_for, write_leaks
    from reviewer_app.batches.loading import load_batch
    from reviewer_app.batches.output_files import file_stem, write_rendered
    from reviewer_app.batches.rubric_file import parse_rubric_text
    from reviewer_app.batches.titles import batch_title_in, scenario_title_in
    from reviewer_app.batches.uploads import UPLOAD_TYPES, Upload, load_uploads, upload_name, without_folder

__all__ = [
    "DEFAULT_ANCHOR_SHARE",
    "UPLOAD_TYPES",
    "BatchRow",
    "TitleRow",
    "Upload",
    "archive_batch",
    "assign_defaults",
    "batch_audience",
    "batch_leaks",
    "batch_list",
    "batch_row",
    "batch_rubric",
    "batch_table",
    "batch_title_in",
    "batch_titles",
    "delete_batch",
    "file_stem",
    "find_batch",
    "image_path",
    "leaks_for",
    "load_batch",
    "load_uploads",
    "no_such_batch",
    "open_to_reviewer",
    "parse_rubric_text",
    "preview_assign",
    "restore_batch",
    "scenario_title_in",
    "set_batch_open",
    "set_batch_reviewers",
    "set_titles",
    "upload_name",
    "without_folder",
    "write_leaks",
    "write_rendered",
]

# Where each name lives: imported on first use, so that importing one module of the package (as every
# `blind-review` command does) does not load all of it.
_HOMES = {
    "upload_name": "reviewer_app.batches.uploads",
    "batch_row": "reviewer_app.batches.admin",
    "without_folder": "reviewer_app.batches.uploads",
    "batch_audience": "reviewer_app.batches.audience",
    "open_to_reviewer": "reviewer_app.batches.audience",
    "set_batch_reviewers": "reviewer_app.batches.audience",
    "BatchRow": "reviewer_app.batches.admin",
    "DEFAULT_ANCHOR_SHARE": "reviewer_app.batches.follow_up",
    "TitleRow": "reviewer_app.batches.admin",
    "UPLOAD_TYPES": "reviewer_app.batches.uploads",
    "Upload": "reviewer_app.batches.uploads",
    "archive_batch": "reviewer_app.batches.admin",
    "assign_defaults": "reviewer_app.batches.admin",
    "batch_leaks": "reviewer_app.batches.leak_list",
    "batch_list": "reviewer_app.batches.catalog",
    "batch_rubric": "reviewer_app.batches.catalog",
    "batch_table": "reviewer_app.batches.admin",
    "batch_title_in": "reviewer_app.batches.titles",
    "batch_titles": "reviewer_app.batches.admin",
    "delete_batch": "reviewer_app.batches.admin",
    "file_stem": "reviewer_app.batches.output_files",
    "find_batch": "reviewer_app.batches.catalog",
    "image_path": "reviewer_app.batches.images",
    "leaks_for": "reviewer_app.batches.leak_list",
    "load_batch": "reviewer_app.batches.loading",
    "load_uploads": "reviewer_app.batches.uploads",
    "no_such_batch": "reviewer_app.batches.catalog",
    "parse_rubric_text": "reviewer_app.batches.rubric_file",
    "preview_assign": "reviewer_app.batches.admin",
    "restore_batch": "reviewer_app.batches.admin",
    "scenario_title_in": "reviewer_app.batches.titles",
    "set_batch_open": "reviewer_app.batches.catalog",
    "set_titles": "reviewer_app.batches.admin",
    "write_leaks": "reviewer_app.batches.leak_list",
    "write_rendered": "reviewer_app.batches.output_files",
}


__getattr__ = lazy_names(__name__, _HOMES)
