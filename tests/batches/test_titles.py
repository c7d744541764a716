"""Names that would unblind: a batch's name and its scenario names are scanned for the batch's model names,
the load warns and loads all the same, reviewers see neutral titles or the ones an admin set (refused when
they name a model), and leads keep the real names. Batches loaded before the titles existed are covered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine

from reviewer_app.batches import titles
from reviewer_app.batches.admin import TitleError, batch_table, batch_titles, set_titles
from reviewer_app.batches.catalog import batch_list
from reviewer_app.batches.leakscan import name_scanner_for
from reviewer_app.batches.load_summary import LoadSummary
from reviewer_app.batches.loading import load_batch
from reviewer_app.batches.rubric_file import parse_rubric_text
from reviewer_app.domain.views import Person
from reviewer_app.errors import AuthError, NotFoundError
from reviewer_app.people.people import add_reviewer
from reviewer_app.review.assignment import assign
from reviewer_app.review.progress import batch_progress
from reviewer_app.review.reviews import batches_for, item_view, next_item, queue
from storage.engine import get_engine
from tests.helpers import RATING_RUBRIC, write_batch, write_rubric

MODELS = ("vicuna-13b", "claude-2", "alpaca-7b")
SCENARIOS = ("vicuna", "helpful_base", "koala")


def records(models: tuple[str, ...] = MODELS, scenarios: tuple[str, ...] = SCENARIOS) -> list[dict[str, Any]]:
    """Two samples per scenario, answered by every model; no text names a model (only names do)."""
    return [
        {
            "sample_id": f"{scenario}-{i}",
            "scenario": scenario,
            "prompt": f"Question {i} of {len(scenario)} letters?",
            "model": model,
            "output": f"An answer, number {i}.",
        }
        for scenario in scenarios
        for i in range(2)
        for model in models
    ]


def load(engine: Engine, folder: Path, name: str, recs: list[dict[str, Any]] | None = None) -> LoadSummary:
    return load_batch(
        engine,
        [write_batch(folder / name, recs or records())],
        write_rubric(folder / name, RATING_RUBRIC.format(overlap=1)),
        name=name,
        open_now=True,
    )


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("alpaca-claude-vicuna", ["Alpaca", "Claude", "Vicuna"]),  # lower case, between dashes
        ("AlpacaClaudeVicuna", ["Alpaca", "Claude", "Vicuna"]),  # camelCase
        ("claude_vs_VICUNA", ["Claude", "Vicuna"]),
        ("vicuna", ["Vicuna"]),  # AlpacaEval's dataset, beside the vicuna-13b candidate
        ("round-2-claude2", ["Claude 2"]),  # the default list's versioned name, longest first
        ("gpt4-baseline", ["GPT-4"]),  # a coined name counts even when the batch has no such model
        ("OpenAI-vs-rest", ["OpenAI"]),
        ("helpful_base", []),
        ("koala", []),  # a model too, but not one of this batch's
        ("amazon-reviews", []),  # an ordinary word of the default list: only with an Amazon model
        ("palm-reading", []),  # "PaLM" is a model only written so
        ("Sonnet writing", []),
    ],
)
def test_names_are_scanned_as_labels_in_any_case(name: str, found: list[str]) -> None:
    assert name_scanner_for(MODELS).scan_name(name) == found


def test_a_model_of_the_batch_counts_in_any_case_even_when_its_word_is_ordinary() -> None:
    assert name_scanner_for(["llama-2-7b-chat"]).scan_name("llama-facts") == ["LLaMA"]
    assert name_scanner_for(["amazon-nova-pro"]).scan_name("amazon-reviews") == ["Amazon"]
    assert name_scanner_for(["a", "b"]).scan_name("write a poem") == []  # one-letter model names are ignored
    # The prose scanner is unchanged: lower-case "claude" in a sentence without a cue is no leak.
    from reviewer_app.batches.leakscan import scanner_for

    assert scanner_for(MODELS).scan("alpaca-claude-vicuna") == []


def test_a_load_warns_about_names_and_loads_all_the_same(engine: Engine, tmp_path: Path) -> None:
    summary = load(engine, tmp_path, "alpaca-claude-vicuna")
    assert not summary.already_loaded and summary.outputs == 18
    lines = summary.lines()
    bid = summary.batch_id
    assert lines[-4:] == [
        "  the batch's name names a model or vendor (Alpaca, Claude, Vicuna): reviewers see it as "
        f"'Batch {bid}' (leads and reports keep the name)",
        "  1 scenario name(s) name a model or vendor, shown to reviewers under a neutral title (leads and reports "
        "keep the names):",
        "    'vicuna' (Vicuna): shown as 'Scenario 3'",  # helpful_base, koala, vicuna: third by name
        "  to give reviewers other titles: `blind-review set-titles alpaca-claude-vicuna` (see its --help)",
    ]
    assert lines[-6:-4] == [
        "  identity-leak scan: no output names a model or vendor",
        "  Batch 'alpaca-claude-vicuna' is open to every active reviewer.",
    ]
    clean = load(engine, tmp_path, "support-v1", records(scenarios=("qa", "summaries")))
    assert clean.lines()[-2:] == [
        "  identity-leak scan: no output names a model or vendor",
        "  Batch 'support-v1' is open to every active reviewer.",  # nothing more
    ]


def test_reviewers_see_neutral_titles_and_leads_the_names(engine: Engine, tmp_path: Path) -> None:
    summary = load(engine, tmp_path, "alpaca-claude-vicuna")
    person, _link = add_reviewer(engine, "ann")
    assign(engine, "alpaca-claude-vicuna", ["ann"])
    (mine,) = batches_for(engine, person.id)
    assert mine.name == f"Batch {summary.batch_id}"
    seen = {item_view(engine, person.id, q.assignment_id).scenario for q in queue(engine, mine.batch_id, person.id)}
    assert seen == {"helpful_base", "koala", "Scenario 3"}
    # The lead's side keeps the real names.
    assert [b.name for b in batch_list(engine)] == ["alpaca-claude-vicuna"]
    assert {r.group for r in batch_progress(engine, summary.batch_id).by_scenario} == set(SCENARIOS)
    (row,) = batch_table(engine)
    assert (row.batch.name, row.title) == ("alpaca-claude-vicuna", f"Batch {summary.batch_id}")
    rows = {(r.kind, r.name): (r.shown, r.why) for r in batch_titles(engine, "alpaca-claude-vicuna")}
    assert rows[("scenario", "vicuna")] == ("Scenario 3", "neutral: the name names a model or vendor (Vicuna)")
    assert rows[("scenario", "koala")] == ("koala", "the name itself")


def test_an_admin_sets_titles_which_are_scanned_too(engine: Engine, tmp_path: Path) -> None:
    summary = load(engine, tmp_path, "alpaca-claude-vicuna")
    ann, _link = add_reviewer(engine, "ann")
    assign(engine, "alpaca-claude-vicuna", ["ann"])
    rows = set_titles(
        engine,
        "alpaca-claude-vicuna",
        display_name="  Helpfulness, round 1 ",
        scenarios={"vicuna": "Open questions", "koala": "Chit-chat"},
    )
    shown = {r.name: r.shown for r in rows}
    assert shown == {
        "alpaca-claude-vicuna": "Helpfulness, round 1",
        "helpful_base": "helpful_base",
        "koala": "Chit-chat",
        "vicuna": "Open questions",
    }
    assert batches_for(engine, ann.id)[0].name == "Helpfulness, round 1"  # read at once: not cached
    view = next_item(engine, summary.batch_id, ann.id)
    assert view is not None and view.scenario in ("Chit-chat", "helpful_base", "Open questions")

    # A title that names a model is refused, with every problem, and nothing changes.
    with pytest.raises(TitleError) as err:
        set_titles(
            engine,
            "alpaca-claude-vicuna",
            display_name="Claude vs the rest",
            scenarios={"vicuna": "vicuna-13b questions", "nope": "x", "koala": "a" * 81},
        )
    message = str(err.value)
    assert "display_name: the title 'Claude vs the rest' names a model or vendor (Claude)" in message
    assert "scenario: 'vicuna': the title 'vicuna-13b questions' names a model or vendor (Vicuna-13B)" in message
    assert "batch 'alpaca-claude-vicuna' has no scenario 'nope' (it has: helpful_base, koala, vicuna)" in message
    assert "at most 80 characters, not 81" in message
    from reviewer_app.cli._common import flag_for

    assert "--display-name: the title 'Claude vs the rest'" in err.value.worded(flag_for)
    assert {r.name: r.shown for r in batch_titles(engine, "alpaca-claude-vicuna")} == shown
    with pytest.raises(TitleError, match="one line"):
        set_titles(engine, "alpaca-claude-vicuna", display_name="two\nlines")

    # An empty title clears one: back to the neutral title for a name that leaks, the name for one that does not.
    rows = set_titles(engine, "alpaca-claude-vicuna", display_name="", scenarios={"vicuna": "", "koala": " "})
    assert {r.name: r.shown for r in rows} == {
        "alpaca-claude-vicuna": f"Batch {summary.batch_id}",
        "helpful_base": "helpful_base",
        "koala": "koala",
        "vicuna": "Scenario 3",
    }
    # Leaving the batch's title out (None) keeps it.
    set_titles(engine, "alpaca-claude-vicuna", display_name="Round 1")
    assert set_titles(engine, "alpaca-claude-vicuna", scenarios={"koala": "K"})[0].shown == "Round 1"


def test_only_admins_set_titles(engine: Engine, tmp_path: Path) -> None:
    load(engine, tmp_path, "alpaca-claude-vicuna")
    lead, _link = add_reviewer(engine, "leo", "lead")
    admin, _link = add_reviewer(engine, "root", "admin")
    with pytest.raises(AuthError):
        set_titles(engine, "alpaca-claude-vicuna", display_name="x", by=Person(lead.id, lead.name, lead.role))
    rows = set_titles(engine, "alpaca-claude-vicuna", display_name="x", by=Person(admin.id, admin.name, admin.role))
    assert rows[0].shown == "x"
    with pytest.raises(NotFoundError):
        set_titles(engine, "no-such-batch", display_name="x")


def test_the_scan_of_a_batchs_names_runs_once_per_process(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = load(engine, tmp_path, "alpaca-claude-vicuna")
    person, _link = add_reviewer(engine, "ann")
    assign(engine, "alpaca-claude-vicuna", ["ann"])
    calls: list[int] = []
    real = titles.repo.model_names

    def counted(session: Any, batch_id: int) -> list[str]:
        calls.append(batch_id)
        return real(session, batch_id)

    monkeypatch.setattr(titles.repo, "model_names", counted)
    monkeypatch.setattr(titles, "_CACHE", {})
    for _ in range(3):
        batches_for(engine, person.id)
        for q in queue(engine, summary.batch_id, person.id):
            item_view(engine, person.id, q.assignment_id)
    assert calls == [summary.batch_id]


def test_a_batch_loaded_before_the_titles_is_covered_and_the_migration_goes_back(tmp_path: Path) -> None:
    """A batch written at revision 0006 (no title columns): after the upgrade its names are scanned from the
    stored model names, as a new batch's are; the downgrade takes the columns away again."""
    from alembic import command

    from storage.migrate import alembic_config, migrate

    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = get_engine(url)
    cfg = alembic_config(old)
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0006")
    with old.begin() as conn:
        rubric_json = parse_rubric_text(RATING_RUBRIC.format(overlap=1)).to_json()
        conn.execute(
            text(
                "INSERT INTO batch (id, name, content_hash, mode, overlap, seed, rubric_toml, rubric_json, status,"
                " source_files, created_at) VALUES (1, 'alpaca-claude-vicuna', 'h', 'rating', 1, 7, '', :r, 'open',"
                " '[]', '2026-01-01')"
            ),
            {"r": rubric_json},
        )
        for i, scenario in enumerate(("vicuna", "oasst"), start=1):
            conn.execute(text("INSERT INTO scenario (id, batch_id, name) VALUES (:i, 1, :n)"), {"i": i, "n": scenario})
            conn.execute(
                text(
                    "INSERT INTO sample (id, batch_id, scenario_id, key, prompt_json, images_json)"
                    " VALUES (:i, 1, :i, :k, '\"p\"', '[]')"
                ),
                {"i": i, "k": f"k{i}"},
            )
        for i, model in enumerate(("vicuna-13b", "claude-2"), start=1):
            conn.execute(text("INSERT INTO model (id, name) VALUES (:i, :n)"), {"i": i, "n": model})
            conn.execute(
                text(
                    "INSERT INTO output (id, batch_id, sample_id, model_id, repeat, text, metadata_json, leak_words,"
                    " excluded) VALUES (:i, 1, 1, :i, 0, 'text', '{}', '', 0)"
                ),
                {"i": i},
            )
    migrate(old)
    from storage.engine import read_session
    from storage.repositories.batches.batches import get_batch

    with read_session(old) as session:
        batch = get_batch(session, 1)
        assert batch is not None and batch.display_name is None
        assert titles.batch_title_in(session, batch) == "Batch 1"
        assert [(s.name, s.shown) for s in titles.scenario_titles_in(session, batch)] == [
            ("oasst", "oasst"),
            ("vicuna", "Scenario 2"),
        ]
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0006")
    with old.connect() as conn:
        for table in ("batch", "scenario"):
            columns = [row[1] for row in conn.execute(text(f"PRAGMA table_info({table})"))]
            assert "display_name" not in columns and "name" in columns
        assert conn.execute(text("SELECT name FROM batch")).scalar() == "alpaca-claude-vicuna"
    migrate(old)  # and up again
    old.dispose()


def test_the_titles_migration_goes_down_and_up_on_both_databases(engine: Engine, tmp_path: Path) -> None:
    from alembic import command
    from sqlalchemy import inspect

    from storage.migrate import alembic_config, current_revision, head_revision, migrate

    load(engine, tmp_path, "alpaca-claude-vicuna")
    set_titles(engine, "alpaca-claude-vicuna", display_name="Round 1", scenarios={"vicuna": "Open"})
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0006")
    with engine.connect() as conn:
        for table in ("batch", "scenario"):
            assert "display_name" not in {c["name"] for c in inspect(conn).get_columns(table)}
        assert conn.execute(text("SELECT count(*) FROM scenario")).scalar() == 3  # rows kept
    migrate(engine)
    assert current_revision(engine) == head_revision()
    # The admin's titles went with the columns: the neutral titles again.
    assert {r.name: r.shown for r in batch_titles(engine, "alpaca-claude-vicuna")}["vicuna"] == "Scenario 3"
