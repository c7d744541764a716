"""A folder Hugging Face ``datasets`` loads offline, ``load_dataset(folder)``: one split, ``train``, as one Parquet
file named as the Hub names a single shard, and a dataset card (``README.md``) whose YAML front matter declares
the data files and the features, and whose text says what the records are and how they were made.

The front matter is written by hand (no YAML library at run time): every string in it is a JSON string, which
YAML reads as a double-quoted scalar.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from reviewer_app.exports.summary import PreferenceExport

DATA_FILE = "data/train-00000-of-00001.parquet"
_DTYPES = {pa.string(): "string", pa.int64(): "int64", pa.float64(): "float64", pa.bool_(): "bool"}


def feature_lines(schema: pa.Schema) -> list[str]:
    """The card's ``features`` list for ``schema``: a dtype per column, and a prompt of messages as a list of
    their fields, as ``datasets`` writes them."""
    lines: list[str] = []
    for field in schema:
        lines.append(f"  - name: {json.dumps(field.name)}")
        if pa.types.is_list(field.type):
            lines.append("    list:")
            for inner in field.type.value_type:
                lines += [f"    - name: {json.dumps(inner.name)}", f"      dtype: {_DTYPES[inner.type]}"]
        else:
            lines.append(f"    dtype: {_DTYPES[field.type]}")
    return lines


def dataset_card(summary: PreferenceExport, schema: pa.Schema, conversation: bool) -> str:
    """The ``README.md`` of the folder: front matter (license placeholder, config and data files, features,
    the split's size), then the description of the batch, the fields, the tie rule and the counts."""
    front = [
        "---",
        "license: other  # a placeholder: set the license of the prompts and outputs before sharing this",
        f"pretty_name: {json.dumps(f'Preferences from Blind Review batch {summary.batch}')}",
        "tags:",
        "- dpo",
        "- preference",
        "- human-feedback",
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        f"    path: {json.dumps(DATA_FILE)}",
        "dataset_info:",
        "  config_name: default",
        "  features:",
        *feature_lines(schema),
        "  splits:",
        "  - name: train",
        f"    num_examples: {summary.records}",
        "---",
    ]
    return "\n".join(front) + "\n\n" + _body(summary, conversation)


def _body(summary: PreferenceExport, conversation: bool) -> str:
    how = (
        "each pair item's reviewers, one verdict each, by majority"
        if summary.source == "pairwise"
        else "each sample's outputs ordered by their mean overall score (the report's), two models at a time"
    )
    ties = (
        "Ties (an even split, or as many even verdicts as votes for the leader; equal mean scores) are kept with "
        "`tie: true`, the pair in model-name order."
        if summary.ties == "mark"
        else "Ties (an even split, or as many even verdicts as votes for the leader; equal mean scores) are left out."
    )
    prompt = (
        "a conversation: the batch file's list of messages (`role`, `content`); a text prompt of the batch is one "
        "user message"
        if conversation
        else "the sample's prompt as text"
    )
    agreement = (
        f" Preferences with agreement below {summary.min_agreement:g} are left out." if summary.min_agreement else ""
    )
    rulings = (
        f" Adjudicators' rulings replace the panel's answers on the items and questions they rule ({summary.ruled} "
        "record(s) marked `adjudicated: true`; their votes and agreement count the ruling in each reviewer's place)."
        if summary.adjudicated
        else " The panel's answers as given: adjudicators' rulings, if any, are not used."
    )
    return "\n".join(
        [
            f"# Preferences from Blind Review batch `{summary.batch}`",
            "",
            f"Pairwise preferences for DPO-style training, from the expert panel of the batch `{summary.batch}`: "
            f"{how}. Only the panel's ratings count (no gold items, no repeat showings, no anchors; never an LLM "
            "judge's).",
            "",
            "**Model names are revealed**: every record names the two models (`chosen_model`, `rejected_model`). "
            "The panel rated them blind; this dataset is not.",
            "",
            "## Fields",
            "",
            f"- `prompt`: {prompt}",
            "- `chosen`, `rejected`: the preferred and the other output's text, as loaded",
            "- `batch`, `scenario`, `sample_id`: where the sample comes from",
            "- `source`: `pairwise` (side-by-side verdicts) or `ratings` (mean scores)",
            "- `chosen_model`, `rejected_model`, `chosen_repeat`, `rejected_repeat`: the outputs' models and repeats",
            "- `chosen_votes`, `rejected_votes`, `tie_votes`: reviewers for each side, and reviewers even",
            "- `agreement`: the share of those reviewers agreeing with the record's verdict (null: no reviewer "
            "rated both outputs)",
            "- `tie`: the panel did not prefer either",
            "- `adjudicated`: an adjudicator's ruling took the panel's answers' place on this pair (only when "
            "exported with rulings)",
            "- `chosen_score`, `rejected_score`: the mean overall scores (0-1, 1 best; ratings only)",
            "",
            "## How it was made",
            "",
            f"{ties}{agreement}{rulings}",
            "",
            f"- records: {summary.records} ({summary.tied} tie(s) {'kept' if summary.ties == 'mark' else 'left out'}"
            f", {summary.below_agreement} left out below the agreement threshold)",
            f"- scenarios: {', '.join(summary.scenarios) or 'none'}",
            f"- models: {', '.join(summary.models) or 'none'}",
            "",
        ]
    )


def folder_files(folder: Path) -> tuple[Path, Path]:
    """The card and the data file of an export folder."""
    return folder / "README.md", folder / DATA_FILE
