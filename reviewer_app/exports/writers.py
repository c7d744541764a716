"""Writing preference records: JSONL (orjson, one record a line) and Parquet (pyarrow), each atomically (a
temporary file renamed into place, so a failed export leaves no half file), and the checks on ``--out``.

The Parquet schema is fixed (:func:`record_schema`) rather than guessed from the rows, so that an export with no
ties, or no records, has the same column types as any other.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from reviewer_app.errors import ExportError, Problem
from reviewer_app.exports.columns import RECORD_COLUMNS

_TEXT = ("chosen", "rejected", "batch", "source", "scenario", "sample_id", "chosen_model", "rejected_model")
_INTS = ("chosen_repeat", "rejected_repeat", "chosen_votes", "rejected_votes", "tie_votes")
_FLOATS = ("agreement", "chosen_score", "rejected_score")


def record_schema(prompts: list[Any], conversation: bool) -> pa.Schema:
    """The Parquet schema of a preference export: ``prompt`` text, or for a batch of conversations a list of
    message structs (their keys as the batch's messages have them: ``role``, ``content`` and any other), then
    the record's columns in order."""
    prompt_type: pa.DataType = pa.string()
    if conversation:
        try:
            prompt_type = pa.array(prompts).type if prompts else pa.list_(_MESSAGE)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ExportError(
                [Problem.argument("format", f"the batch's messages cannot be one Parquet column ({exc}); use jsonl")]
            ) from exc
    types = {**dict.fromkeys(_TEXT, pa.string()), **dict.fromkeys(_INTS, pa.int64())}
    types |= dict.fromkeys(_FLOATS, pa.float64())
    types["tie"] = types["adjudicated"] = pa.bool_()
    return pa.schema([pa.field("prompt", prompt_type)] + [pa.field(c, types[c]) for c in RECORD_COLUMNS[1:]])


_MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])


def write_jsonl(records: list[dict[str, Any]], path: Path) -> None:
    """One record a line, keys in column order, UTF-8 as written (orjson)."""
    lines = b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in records)
    _atomically(path, lambda tmp: tmp.write_bytes(lines))


def write_text(text: str, path: Path) -> None:
    """A UTF-8 text file (a dataset card), written as the data files are."""
    _atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_parquet(records: list[dict[str, Any]], schema: pa.Schema, path: Path) -> None:
    """The records as one Parquet file with ``schema`` (see :func:`record_schema`)."""
    table = pa.Table.from_pylist(records, schema=schema)
    _atomically(path, lambda tmp: pq.write_table(table, tmp))


def _atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write`` a temporary file beside ``path``, then rename it into place; nothing is left on failure."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError([Problem.argument("out", f"cannot write {path} ({exc.strerror}); check the path")]) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_file_out(path: Path) -> None:
    """``--out`` for a one-file format: a file (replaced if it exists), not a folder."""
    if path.is_dir():
        raise ExportError(
            [Problem.argument("out", f"{path} is a folder; give a file to write, e.g. {path / 'preferences.jsonl'}")]
        )


HF_ENTRIES = frozenset({"README.md", "data"})  # what a Hugging Face folder export holds


def check_folder_out(path: Path) -> None:
    """``--out`` for ``--format hf``: a folder that does not exist yet, is empty, or holds an earlier export
    (only ``README.md`` and ``data/``), which is replaced; never a file, never someone's other files."""
    if path.exists() and not path.is_dir():
        raise ExportError(
            [Problem.argument("out", f"{path} is a file; --format hf writes a folder: give a new folder's name")]
        )
    if path.is_dir():
        others = sorted(p.name for p in path.iterdir() if p.name not in HF_ENTRIES)
        if others:
            shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
            raise ExportError(
                [Problem.argument("out", f"folder {path} holds other files ({shown}); give a new or empty folder")]
            )
