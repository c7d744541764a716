"""The judge's prompt, tested as an attacker would: batches whose models, files, samples, batch and scenarios
are model names ("gpt-4o", "claude-3", "llama-3-70b") are loaded and planned like any other; for every item a
reviewer is given, in both orders of a pair, neither the judge's messages nor its answer schema name one of
them (everything serialized to JSON and searched, case-insensitively), while the answers go in verbatim and
the prompt's image goes in as an image part with the file's very bytes. A template file's errors are located.
"""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from sqlalchemy.engine import Engine

from reviewer_app.batches import batch_rubric, find_batch, load_batch
from reviewer_app.domain.enums import Mode, Scale
from reviewer_app.domain.rubric import PAIRWISE_DIMENSION, Dimension, Rubric
from reviewer_app.domain.views import ReviewItemView, ShownOutput
from reviewer_app.errors import JudgeTemplateError
from reviewer_app.judge.prompt import DEFAULT_TEMPLATE, JudgeTemplate, judge_messages, judge_orders
from reviewer_app.judge.schema import answer_schema
from reviewer_app.people.people import add_reviewer
from reviewer_app.review import reviews
from reviewer_app.review.assignment import assign
from tests.helpers import write_batch, write_rubric

MODELS = ("gpt-4o", "claude-3", "llama-3-70b")
SCENARIOS = ("claude-3", "llama-3-70b")
# Every name the batches are made of, and the words that give a model away.
FORBIDDEN = re.compile(r"gpt|4o|claude|llama|70b|\.jsonl|\.toml|\.png|judge\.txt", re.IGNORECASE)
# Answers as a model may write them: braces like a placeholder, the tags the prompt uses, Markdown, HTML,
# backslashes, blank lines, leading and trailing spaces, a tab: all must reach the judge exactly.
TRICKY = "  Step 1: {{answers}} and {{prompt}}\n\n\n</answer> <b>bold</b> \\1 \\n `x` é — ünï\t\n  "

RATING_RUBRIC = """
mode = "rating"
overlap = 1
seed = 3
show_reference = true
show_criteria = true
show_checks = true
instructions = "Judge the answer as a support lead would."
leak_words = ["gpt-4o", "claude-3", "llama-3-70b"]

[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
labels = { 1 = "wrong", 3 = "partly right", 5 = "fully right" }
level = "ordinal"

[[dimensions]]
name = "follows_format"
description = "Does it follow the requested format?"
scale = "binary"
level = "nominal"

[[dimensions]]
name = "tone"
description = "Which tone does the answer take?"
scale = "categorical"
choices = ["formal", "friendly", "curt"]
level = "nominal"

[[dimensions]]
name = "mqm"
description = "MQM error score (0 = perfect)"
scale = "continuous"
min = 0.0
max = 200.0
level = "interval"
higher_is_better = false

[scenarios."claude-3"]
dimensions = ["correctness", "follows_format"]
weight = 2.0
"""

PAIRWISE_RUBRIC = """
mode = "pairwise"
overlap = 1
seed = 5
show_reference = false
show_criteria = true
instructions = "Prefer the answer a customer could act on."
leak_words = ["gpt-4o", "claude-3"]
pairwise_granularity = "per_dimension"

[[dimensions]]
name = "helpfulness"
description = "Which answer helps more?"

[[dimensions]]
name = "safety"
description = "Which answer is safer?"

[scenarios."llama-3-70b"]
dimensions = ["helpfulness"]
"""


def _png(path: Path) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (6, 4), (200, 30, 30)).save(out, "PNG")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out.getvalue())
    return out.getvalue()


def _records(folder: Path) -> list[dict[str, Any]]:
    out = []
    for i, scenario in enumerate(SCENARIOS * 2):
        for n, model in enumerate(MODELS):
            record: dict[str, Any] = {
                "sample_id": f"gpt-4o-sample-{i}",
                "scenario": scenario,
                "prompt": f"Question {i}: what is the total on this invoice?",
                "model": model,
                "output": f"Answer {n} to question {i}.{TRICKY}",
                "reference": f"The total for question {i}.",
                "criteria": f"Gives the total with its currency ({i}).",
                "metadata": {"model_version": f"{model}-2024-08-06", "latency_ms": 100},
                "checks": [{"type": "max_words", "value": 50}],
            }
            if i == 1:
                record["prompt"] = [
                    {"role": "system", "content": "You answer invoices."},
                    {"role": "user", "content": "What is the total?"},
                ]
                record["images"] = ["llama-3-70b.png"]
            out.append(record)
    _png(folder / "llama-3-70b.png")
    return out


def _load(engine: Engine, folder: Path, name: str, rubric: str) -> Rubric:
    load_batch(
        engine,
        [write_batch(folder, _records(folder), name="gpt-4o.jsonl")],
        write_rubric(folder, rubric, name="claude-3-rubric.toml"),
        name=name,
        open_now=True,
    )
    assign(engine, name, ["ann"])
    return batch_rubric(find_batch(engine, name))


def _views(engine: Engine, name: str, reviewer_id: int) -> list[ReviewItemView]:
    """Every item of the batch as the reviewer's page gets it (the reviewer's own services)."""
    batch_id = find_batch(engine, name).id
    assert batch_id is not None
    return [
        reviews.item_view(engine, reviewer_id, e.assignment_id) for e in reviews.queue(engine, batch_id, reviewer_id)
    ]


def _text(value: Any) -> str:
    """Everything as JSON, with image data URLs cut out (their base64 is checked against the file instead)."""
    return re.sub(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", "data:IMAGE", json.dumps(value, ensure_ascii=False))


def _user_text(messages: list[dict[str, Any]]) -> str:
    content = messages[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def _assert_blind(value: Any, where: str) -> None:
    text = _text(value)
    leak = FORBIDDEN.search(text)
    assert leak is None, f"{where} names {leak.group(0)!r}: ...{text[max(0, leak.start() - 80) : leak.end() + 40]}"


@pytest.fixture
def batches(sqlite_engine: Engine, tmp_path: Path) -> tuple[dict[str, Rubric], int]:
    """The two batches (name -> the rubric stored with it) and the id of ann, who has every item."""
    ann = add_reviewer(sqlite_engine, "ann")[0].id
    return {
        "gpt-4o vs claude-3": _load(sqlite_engine, tmp_path / "rating", "gpt-4o vs claude-3", RATING_RUBRIC),
        "llama-3-70b pairs": _load(sqlite_engine, tmp_path / "pairs", "llama-3-70b pairs", PAIRWISE_RUBRIC),
    }, ann


def test_a_batch_named_for_models_gives_the_judge_no_name(
    sqlite_engine: Engine, batches: tuple[dict[str, Rubric], int], tmp_path: Path
) -> None:
    template_file = tmp_path / "gpt-4o-claude-3-judge.txt"
    template_file.write_text(DEFAULT_TEMPLATE.user.replace("{{answers}}", "Read closely.\n\n{{answers}}"))
    templates = [DEFAULT_TEMPLATE, JudgeTemplate.from_file(template_file)]
    source_image = (tmp_path / "rating" / "llama-3-70b.png").read_bytes()
    seen = {"rating": 0, "pairwise": 0, "images": 0, "narrowed": 0}
    rubrics, ann = batches
    for name, rubric in rubrics.items():
        views = _views(sqlite_engine, name, ann)
        assert views
        for view in views:
            orders = judge_orders(view)
            for template in templates:
                for order in orders:
                    messages = judge_messages(order.view, rubric, template)
                    schema = answer_schema(order.view.dimensions, view.mode)
                    _assert_blind(messages, f"the messages for item {view.label} of {name!r}")
                    _assert_blind(schema, f"the schema for item {view.label} of {name!r}")
                    user = _user_text(messages)
                    for output in order.view.outputs:  # verbatim, under its label
                        tag = f'<answer label="{output.side}">' if output.side else "<answer>"
                        assert f"{tag}\n{output.text}\n</answer>" in user
                        assert output.text.endswith(TRICKY)
                    assert ("Criteria" in user) == bool(view.criteria)
                    assert ("Reference answer" in user) == (rubric.show_reference and bool(view.reference))
                    if view.images:
                        parts = messages[-1]["content"]
                        urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
                        assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,")
                        assert base64.b64decode(urls[0].split(",", 1)[1]) == source_image
                        seen["images"] += 1
                    if len(view.dimensions) < len(rubric.dimensions):
                        seen["narrowed"] += 1
                seen[Mode(view.mode).value] += 1
            for part in (template.system, template.user):
                _assert_blind(part, f"the template from {template.source}")
    assert seen["rating"] == 2 * 12 and seen["pairwise"] == 2 * 12  # 4 samples x 3 models / 3 pairs, 2 templates
    assert seen["images"] and seen["narrowed"]


def test_a_pair_is_judged_in_both_orders_with_the_labels_swapped(
    sqlite_engine: Engine, batches: tuple[dict[str, Rubric], int]
) -> None:
    rubrics, ann = batches
    rubric = rubrics["llama-3-70b pairs"]
    view = _views(sqlite_engine, "llama-3-70b pairs", ann)[0]
    shown, swapped = judge_orders(view)
    assert not shown.swapped and swapped.swapped and shown.view == view
    a, b = view.outputs
    assert [(o.side, o.text) for o in swapped.view.outputs] == [("A", b.text), ("B", a.text)]
    first = _user_text(judge_messages(shown.view, rubric))
    second = _user_text(judge_messages(swapped.view, rubric))
    assert first.index(a.text) < first.index(b.text) and second.index(b.text) < second.index(a.text)
    assert f'<answer label="A">\n{b.text}\n</answer>' in second
    # "A is better" in the swapped order is "B is better" in the view's own.
    assert swapped.original({"helpfulness": "left", "safety": "tie"}) == {"helpfulness": "right", "safety": "tie"}
    assert shown.original({"helpfulness": "left"}) == {"helpfulness": "left"}


# --- the template, on hand-built views --------------------------------------------------------------------------

LIKERT = Dimension("correctness", "Is every fact right?", Scale.LIKERT, "ordinal", 1, 5, {"1": "wrong", "5": "right"})
BINARY = Dimension("follows_format", "", Scale.BINARY, "nominal")


def _view(**changes: Any) -> ReviewItemView:
    base: dict[str, Any] = {
        "assignment_id": 7,
        "label": "K7Q2M",
        "mode": Mode.RATING,
        "scenario": "Scenario 1",
        "prompt": "What is 2 + 2?",
        "images": [],
        "criteria": "A number.",
        "reference": "4",
        "outputs": [ShownOutput("", "It is 4.")],
        "dimensions": [LIKERT, BINARY],
        "answers": {"correctness": "2"},
        "comment": "my private note",
        "instructions": "Be strict.",
    }
    return ReviewItemView(**{**base, **changes})


def test_the_default_prompt_has_every_section_and_nothing_of_the_reviewers() -> None:
    messages = judge_messages(_view(), Rubric(mode=Mode.RATING, overlap=1, dimensions=(LIKERT, BINARY)))
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    headings = [line for line in user.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Instructions", "## The prompt", "## Criteria", "## Reference answer", "## The answer to judge",
        "## Questions", "## How to answer",
    ]  # fmt: skip
    assert '- "correctness" (Correctness): Is every fact right?\n  Values: 1 — wrong; 2; 3; 4; 5 — right' in user
    assert '- "follows_format" (Follows format)\n  Values: 1 — Yes; 0 — No' in user
    assert '"answers": {"correctness": <one of 1, 2, 3, 4, 5>, "follows_format": <one of 1, 0>}' in user
    assert "\n\n\n" not in user
    for private in ("K7Q2M", "Scenario 1", "my private note"):  # the label, the title, the reviewer's own
        assert private not in json.dumps(messages)


def test_what_the_rubric_hides_and_what_is_empty_is_left_out() -> None:
    rubric = Rubric(mode=Mode.RATING, overlap=1, dimensions=(LIKERT,), show_criteria=False, show_reference=False)
    user = judge_messages(_view(instructions="", dimensions=[LIKERT]), rubric)[1]["content"]
    assert "## Criteria" not in user and "## Reference" not in user and "## Instructions" not in user
    assert "A number." not in user and "\n\n\n" not in user
    assert user.startswith("## The prompt\n\nWhat is 2 + 2?\n\n## The answer to judge")


def test_a_conversation_and_images_become_turns_and_image_parts() -> None:
    view = _view(
        prompt=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
        images=["ab12.png", "cd34.jpg"],
    )
    rubric = Rubric(mode=Mode.RATING, overlap=1, dimensions=(LIKERT, BINARY))
    read = {"ab12.png": b"png-bytes", "cd34.jpg": b"jpg-bytes"}.__getitem__
    parts = judge_messages(view, rubric, image_bytes=read)[1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url", "text"]
    assert parts[0]["text"].endswith(
        '## The conversation\n\n<turn role="user">\nHi\n</turn>\n<turn role="assistant">\nHello\n</turn>'
    )
    assert parts[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(b"png-bytes").decode()
    assert parts[2]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert parts[3]["text"].startswith("## Criteria")
    # A template without {{images}}: the images follow the text.
    plain = JudgeTemplate.from_text("{{prompt}}\n{{answers}}\n{{questions}}")
    parts = judge_messages(view, rubric, plain, image_bytes=read)[0]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url"]


def test_a_pairwise_view_asks_for_a_verdict_between_a_and_b() -> None:
    view = _view(
        mode=Mode.PAIRWISE, outputs=[ShownOutput("A", "one"), ShownOutput("B", "two")], dimensions=[PAIRWISE_DIMENSION]
    )
    user = judge_messages(view, Rubric(mode=Mode.PAIRWISE, overlap=1, dimensions=(PAIRWISE_DIMENSION,)))[1]["content"]
    assert (
        '## The answers to compare\n\n<answer label="A">\none\n</answer>\n\n<answer label="B">\ntwo\n</answer>' in user
    )
    assert "Values: A — A is better; B — B is better; tie — Tie; both_bad — Both bad" in user
    assert len(judge_orders(_view())) == 1
    with pytest.raises(ValueError, match="pairwise item under a rating rubric"):
        judge_messages(view, Rubric(mode=Mode.RATING, overlap=1, dimensions=(LIKERT,)))


def test_a_template_file_replaces_the_default(tmp_path: Path) -> None:
    path = tmp_path / "mine.txt"
    path.write_text("[system]\nYou grade answers.\n[user]\n{{ questions }}\n\n{{answers}}\n{{prompt}}\n")
    template = JudgeTemplate.from_file(path)
    assert template.digest != DEFAULT_TEMPLATE.digest
    messages = judge_messages(_view(), Rubric(mode=Mode.RATING, overlap=1, dimensions=(LIKERT, BINARY)), template)
    assert messages[0] == {"role": "system", "content": "You grade answers."}
    assert messages[1]["content"].startswith("## Questions")
    assert messages[1]["content"].endswith("## The prompt\n\nWhat is 2 + 2?")


ALL = "{{prompt}}{{answers}}{{questions}}"  # the required placeholders


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "{{prompt}}\n{{answers}}\n{{question}}\n",
            ["mine.txt:3: {{question}}: unknown placeholder", "{{questions}}: missing"],
        ),
        ("{{prompt}}\n{{questions}}\n", ["mine.txt: {{answers}}: missing: the judge would not see it"]),
        (f"[system]\n{{{{images}}}}\n[user]\n{ALL}", ["{{images}}: images go in the user message"]),
        (f"[system]\nYou grade.\n{ALL}", ["[user]: a template with [system] needs a [user] line"]),
        (f"hello\n[user]\n{ALL}", ["mine.txt:1: text before the first [system] or [user] line"]),
        (f"[user]\n{ALL}\n{{{{images}}}}\n{{{{images}}}}", ["mine.txt:4: {{images}}: appears more than once"]),
        (f"[user]\n{ALL}\n[user]\n", ["[user]: appears more than once"]),
        ("[system]\n{{prompt}}{{answers}}{{questions}}\n[user]\n", ["[user]: the user message is empty"]),
    ],
)
def test_a_template_files_errors_name_the_file_the_line_and_the_placeholder(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = tmp_path / "mine.txt"
    path.write_text(text)
    with pytest.raises(JudgeTemplateError) as caught:
        JudgeTemplate.from_file(path)
    message = str(caught.value)
    assert "problem(s) in the judge prompt template" in message
    for part in expected:
        assert part.replace("mine.txt", str(path)) in message


def test_a_missing_template_file_is_our_error(tmp_path: Path) -> None:
    with pytest.raises(JudgeTemplateError, match=r"nowhere\.txt: cannot be read"):
        JudgeTemplate.from_file(tmp_path / "nowhere.txt")


def test_the_readme_shows_the_default_template_and_every_placeholder() -> None:
    from reviewer_app.judge.prompt import DEFAULT_TEMPLATE_TEXT, PLACEHOLDERS

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### LLM judge: `judge BATCH", 1)[1].split("\n## ", 1)[0]
    assert f"```text\n{DEFAULT_TEMPLATE_TEXT}```" in section
    for name, required in PLACEHOLDERS.items():
        assert f"| `{{{{{name}}}}}` | {'yes' if required else 'no'} |" in section
