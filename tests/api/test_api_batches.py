"""Batches through the API, driven with the Python client against a real server on loopback: loads (files,
zips, the same content again), located problems as problem details, upload bounds, pages, status, management."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import Engine

from reviewer_app.batches.loading import load_batch
from reviewer_app.client import BlindReview
from reviewer_app.errors import (
    BatchValidationError,
    ConflictError,
    NotFoundError,
    ReportError,
    RubricError,
    ValidationError,
)
from tests.helpers import RATING_RUBRIC, make_records, write_batch, write_rubric
from tests.support.api_server import Tokens, role_tokens, running_api


@pytest.fixture
def api(engine: Engine) -> Iterator[tuple[str, Tokens]]:
    tokens = role_tokens(engine)
    with running_api(engine) as url:
        yield url, tokens


def test_load_then_the_same_content_again_gives_the_existing_batch(api: tuple[str, Tokens], tmp_path: Path) -> None:
    url, tokens = api
    files = [write_batch(tmp_path, make_records(4, ["m-one", "m-two"]))]
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2))
    with BlindReview(url, tokens.admin) as br:
        first = br.load_batch("pilot", files, rubric, reviewers=["rex"])
        assert (first.already_loaded, first.batch_name, first.outputs, first.items) == (False, "pilot", 8, 8)
        assert first.outputs_per_model == {"m-one": 4, "m-two": 4}
        assert any("Loaded batch 'pilot'" in line for line in first.summary)
        again = br.load_batch("pilot-again", files, rubric)
        assert (again.already_loaded, again.batch_id, again.batch_name) == (True, first.batch_id, "pilot")
        assert [b.name for b in br.batches()] == ["pilot"]
    # The HTTP statuses say the same: 201 made, 200 found.
    with httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.admin}"}) as http:
        answer = http.post(
            "batches",
            data={"name": "x"},
            files=[("files", ("batch.jsonl", files[0].read_bytes())), ("rubric", ("rubric.toml", rubric.read_bytes()))],
        )
        assert answer.status_code == 200 and answer.json()["already_loaded"] is True


def test_a_zip_with_images_loads(api: tuple[str, Tokens], tmp_path: Path) -> None:
    url, tokens = api
    records = make_records(2, ["a", "b"])
    records[0]["images"] = records[1]["images"] = ["img/one.png"]
    packed = tmp_path / "batch.zip"
    png = (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
        b"\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82"
    )
    with zipfile.ZipFile(packed, "w") as z:
        z.writestr("data/batch.jsonl", write_batch(tmp_path / "src", records).read_text())
        z.writestr("data/img/one.png", png)
    with BlindReview(url, tokens.admin) as br:
        loaded = br.load_batch("zipped", [packed], write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1)))
    assert (loaded.outputs, loaded.images) == (4, 1)


def test_bad_files_come_back_located_and_nothing_is_written(api: tuple[str, Tokens], tmp_path: Path) -> None:
    url, tokens = api
    records = make_records(3, ["m-one", "m-two"])
    del records[3]["output"]
    bad = write_batch(tmp_path, records, name="outputs.jsonl")
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2))
    with BlindReview(url, tokens.admin) as br:
        with pytest.raises(BatchValidationError) as caught:
            br.load_batch("bad", [bad], rubric)
        problem = caught.value.problems[0]
        assert (problem.file, problem.line, problem.field) == ("outputs.jsonl", 4, "output")
        assert "outputs.jsonl:4: output:" in str(caught.value)  # the CLI's own wording
        assert "nothing was written" in str(caught.value)
        with pytest.raises(RubricError) as caught_rubric:
            br.load_batch(
                "bad",
                [write_batch(tmp_path, make_records(2, ["a"]))],
                write_rubric(tmp_path, "mode = 7", name="broken.toml"),
            )
        assert "broken.toml" in str(caught_rubric.value)
        assert br.batches() == []
    with httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.admin}"}) as http:
        sent = [("files", ("outputs.jsonl", bad.read_bytes())), ("rubric", ("rubric.toml", rubric.read_bytes()))]
        answer = http.post("batches", data={"name": "bad"}, files=sent)
        body = answer.json()
        assert answer.status_code == 422 and answer.headers["content-type"] == "application/problem+json"
        assert body["type"] == "urn:blind-review:error:BatchValidationError"
        assert {"file": "outputs.jsonl", "line": 4, "field": "output"}.items() <= body["errors"][0].items()
        # Parameters FastAPI checks itself are worded the same way.
        answer = http.post("batches", data={"name": "bad", "on_leak": "shrug"}, files=[("files", b"{}")])
        assert answer.status_code == 422
        assert answer.json()["errors"][0]["field"] == "on_leak"


def test_uploads_are_bounded(api: tuple[str, Tokens], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, tokens = api
    monkeypatch.setenv("BLIND_REVIEW_MAX_UPLOAD_MB", "1")
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * (1024 * 1024 + 10))
    with httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.admin}"}) as http:
        answer = http.post("batches", data={"name": "big"}, files=[("files", ("big.jsonl", big.read_bytes()))])
        assert answer.status_code == 413
        assert "big.jsonl: over 1 MB" in answer.json()["detail"]
        monkeypatch.setenv("BLIND_REVIEW_MAX_UNPACKED_MB", "1")
        answer = http.post("batches", data={"name": "big"}, files=[("files", ("big.jsonl", big.read_bytes()))])
        assert answer.status_code == 413 and "in one request" in answer.json()["detail"]


def test_pages_status_and_management(api: tuple[str, Tokens], engine: Engine, tmp_path: Path) -> None:
    url, tokens = api
    rubric = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=1))
    for i in range(5):
        load_batch(engine, [write_batch(tmp_path / str(i), make_records(2 + i, ["a", "b"]))], rubric, name=f"b{i}")
    with BlindReview(url, tokens.admin) as br:
        with httpx.Client(base_url=url + "/", headers={"Authorization": f"Bearer {tokens.lead}"}) as http:
            page = http.get("batches", params={"limit": 2, "offset": 2}).json()
            assert ([b["name"] for b in page["items"]], page["total"], page["next_offset"]) == (["b2", "b3"], 5, 4)
            assert http.get("batches", params={"limit": 0}).status_code == 422
        assert [b.name for b in br.batches()] == [f"b{i}" for i in range(5)]
        status = br.batch("b0")
        assert (status.batch.status, status.complete, status.progress.done) == ("closed", False, 0)
        assert br.open_batch("b0").batch.status == "open"
        assert br.set_batch_reviewers("b0", add=["rex"]).open_to == ["rex"]
        planned = br.assign("b0")
        assert (planned.new_assignments, planned.per_reviewer) == (4, {"rex": 4})
        assert br.batch("b0").progress.remaining == 4
        assert br.close_batch("b0").batch.status == "closed"
        titles = br.set_titles("b1", display_name="Support round", scenarios={"qa": "Questions"})
        assert {(t.kind, t.shown) for t in titles} >= {("batch", "Support round"), ("scenario", "Questions")}
        assert br.archive_batch("b1").batch.archived is True
        assert [b.name for b in br.batches(archived=True)] == ["b1"]
        assert br.restore_batch("b1").batch.archived is False
        with pytest.raises(ValidationError, match="confirm: type the batch's name, 'b4', to delete it"):
            br.delete_batch("b4", confirm="b3")
        assert br.delete_batch("b4", confirm="b4").batch_name == "b4"
        with pytest.raises(NotFoundError, match="no batch named 'b4'"):
            br.batch("b4")


def test_people_through_the_api(api: tuple[str, Tokens]) -> None:
    url, tokens = api
    with BlindReview(url, tokens.admin) as br:
        made = br.add_person("nia", "reviewer")
        assert made.link.startswith("http") and "token=" in made.link
        assert br.new_link("nia").link != made.link
        assert {(p.name, p.role) for p in br.people()} >= {("nia", "reviewer"), ("ada", "admin")}
        assert [p.name for p in br.people(role="reviewer")] == ["nia", "rex"]
        assert br.revoke("nia").released == 0
        with pytest.raises(ConflictError):
            br.add_person("ada", "lead")
        assert br.me().name == "ada"


def test_a_refused_download_leaves_no_file(api: tuple[str, Tokens], tmp_path: Path) -> None:
    url, tokens = api
    out = tmp_path / "out" / "ratings.csv"
    with BlindReview(url, tokens.lead) as br, pytest.raises(NotFoundError):
        br.export_ratings("nope", out)
    assert not list(out.parent.iterdir())  # neither the file nor its .part


def test_an_adaptive_pool_through_the_api(api: tuple[str, Tokens], tmp_path: Path) -> None:
    url, tokens = api
    rubric = write_rubric(tmp_path, 'allocation = "adaptive"\n' + RATING_RUBRIC.format(overlap=2))
    plain = write_rubric(tmp_path, RATING_RUBRIC.format(overlap=2), name="plain.toml")
    with BlindReview(url, tokens.admin) as br:
        br.load_batch("adaptive", [write_batch(tmp_path / "a", make_records(6, ["a", "b"]))], rubric)
        br.load_batch("uniform", [write_batch(tmp_path / "u", make_records(5, ["a", "b"]))], plain)
        pool = br.refresh_allocation("adaptive")
        assert {s.scenario: (s.state, s.held) for s in pool.scenarios} == {
            "qa": ("burn_in", 3),
            "summaries": ("burn_in", 3),
        }
        assert pool.summary[0].startswith("Adaptive pool of 'adaptive'")
        assert br.allocation("adaptive").scenarios == pool.scenarios
        with pytest.raises(ReportError, match="adaptive"):
            br.allocation("uniform")
