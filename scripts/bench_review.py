"""Benchmark: from Submit to the next item being ready, on a big database, beside a bare Streamlit rerun.

Builds a database with 100,000 outputs (25,000 samples x 4 models, rating mode, k = 4) and 300,000 ratings
(three imported reviewers per item), then plans the free slot of every item over 20 bench reviewers.
Measured, all server-side and in one run:

* ``services``: ``submit_review`` + ``next_item`` (the database work of one Submit), per item.
* ``app run``: the whole reviewer page through Streamlit's AppTest: set the answers, press Submit; the run
  saves (in the button's callback) and renders the next item, including the sign-in check and the page's
  other queries. This is what the server does between the click and the next item being sent.
* ``bare rerun``: AppTest running an empty script, the same harness, the floor of any Streamlit rerun.
  "Our work" = app run minus bare rerun.
* ``browser``: in headless Chromium (Debian's /usr/bin/chromium) on a real ``blind-review serve``, what the
  reviewer sees: from the click on Submit to the next item's prompt being on screen (its heading changed and
  its "Prompt" heading inside the viewport, polled every animation frame in the page itself, so the clock is
  the browser's). Before each Submit the reviewer has scrolled to the bottom of the page, as after reading a
  long answer; an arrival whose prompt is not in view within 10 s is counted apart, not timed.
* memory: RSS of a real ``blind-review serve`` process before and after 20 reviewer sessions opened in
  headless Chromium, each on its own item.

    python scripts/bench_review.py [--outputs 100000] [--submits 200] [--browser-submits 40]
                                   [--viewport 1440x900] [--database-url URL] [--no-memory] [--no-app]

To compare with an older commit, copy this script into a worktree of that commit and run it there (it imports
the code beside it).
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUBRIC = """mode = "rating"
overlap = 4
seed = 3
[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
labels = { 1 = "wrong", 5 = "right" }
level = "ordinal"
"""
MODELS = ("m-alpha", "m-beta", "m-gamma", "m-delta")
SCENARIOS = ("qa", "summaries", "code", "support", "data")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def build(folder: Path, outputs: int) -> None:
    import json

    from reviewer_app.batches.loading import load_batch
    from reviewer_app.people.people import add_reviewer
    from reviewer_app.ratings.files import import_ratings
    from reviewer_app.review.assignment import assign
    from reviewer_app.settings import database_url
    from storage.engine import analyze, get_engine
    from storage.migrate import migrate

    engine = get_engine(database_url())
    migrate(engine)
    samples = outputs // len(MODELS)
    batch_file = folder / "batch.jsonl"
    with batch_file.open("w", encoding="utf-8") as f:
        for i in range(samples):
            for m in MODELS:
                f.write(
                    json.dumps(
                        {
                            "sample_id": f"s{i}",
                            "scenario": SCENARIOS[i % 5],
                            "prompt": f"Question {i}: " + "explain the trade-offs. " * 8,
                            "model": m,
                            "output": f"Answer {i}. " + "A paragraph of a plausible answer. " * 30,
                        }
                    )
                    + "\n"
                )
    (folder / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    t = time.perf_counter()
    load_batch(engine, [batch_file], folder / "rubric.toml", name="bench", open_now=True)
    print(f"loaded {samples * len(MODELS):,} outputs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    ratings_file = folder / "ratings.csv"
    with ratings_file.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["reviewer", "sample_id", "model", "dimension", "score"])
        for i in range(samples):
            for m in MODELS:
                for r in range(3):
                    w.writerow([f"panel-{r}", f"s{i}", m, "correctness", 1 + (i + r) % 5])
    t = time.perf_counter()
    import_ratings(engine, "bench", ratings_file)
    print(f"imported {samples * len(MODELS) * 3:,} ratings in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    links = [add_reviewer(engine, f"bench-{i:02d}")[1] for i in range(20)]
    assign(engine, "bench", [f"bench-{i:02d}" for i in range(20)])
    analyze(engine)  # what autovacuum does within a minute of the load: measure the steady state
    (folder / "links.txt").write_text("\n".join(links), encoding="utf-8")


def bench_services(submits: int) -> list[float]:
    from reviewer_app.people.people import get_person
    from reviewer_app.review import reviews
    from reviewer_app.settings import database_url
    from storage.engine import get_engine

    engine = get_engine(database_url())
    person = get_person(engine, "bench-00")
    batch = reviews.batches_for(engine, person.id)[0]
    view = reviews.next_item(engine, batch.batch_id, person.id)
    times = []
    for i in range(submits):
        assert view is not None
        t = time.perf_counter()
        reviews.submit_review(engine, person.id, view.assignment_id, {"correctness": str(1 + i % 5)})
        view = reviews.next_item(engine, batch.batch_id, person.id)
        times.append(time.perf_counter() - t)
    return times


def bench_app(folder: Path, submits: int) -> tuple[list[float], list[float]]:
    from streamlit.testing.v1 import AppTest

    token = (folder / "links.txt").read_text().splitlines()[1].split("token=")[-1]
    at = AppTest.from_file(str(ROOT / "reviewer_app" / "ui" / "app.py"), default_timeout=60)
    at.query_params["token"] = token
    at.run()
    app_times = []
    for i in range(submits):
        label = next(s.value for s in at.subheader if s.value.startswith("Item "))
        radio = at.radio[0]
        radio.set_value(str(1 + i % 5))
        button = next(b for b in at.button if b.label == "Submit and next")
        t = time.perf_counter()
        button.click()
        at.run()
        app_times.append(time.perf_counter() - t)
        assert not at.exception and next(s.value for s in at.subheader if s.value.startswith("Item ")) != label
    bare = AppTest.from_string("pass")
    bare.run()
    bare_times = []
    for _ in range(submits):
        t = time.perf_counter()
        bare.run()
        bare_times.append(time.perf_counter() - t)
    return app_times, bare_times


# Runs in the page: resolves with the milliseconds from the Submit click to the next item's prompt being in
# view (or -1 after 10 s). The click is made here too, so both ends are read off the same clock.
_SUBMIT_TO_PROMPT = """async () => {
  const label = () => { const h = Array.from(document.querySelectorAll('h3'))
      .find(e => /^Item \\w+$/.test(e.innerText.trim())); return h ? h.innerText.trim() : null; };
  const promptInView = () => { const h = Array.from(document.querySelectorAll('h5'))
      .find(e => e.innerText.trim() === 'Prompt');
    if (!h || h.closest('[data-stale="true"]')) return false;
    const r = h.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; };
  const before = label();
  const button = Array.from(document.querySelectorAll('button'))
      .find(b => /Submit and next/.test(b.innerText));
  const t0 = performance.now();
  button.click();
  return await new Promise(resolve => {
    const tick = () => {
      const now = performance.now();
      if (label() !== null && label() !== before && promptInView()) return resolve(now - t0);
      if (now - t0 > 10000) return resolve(-1);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}"""

_TO_BOTTOM = """() => { const m = document.querySelector('[data-testid="stMain"]');
  [m, document.scrollingElement].forEach(el => { if (el) el.scrollTop = el.scrollHeight; }); }"""


def bench_browser(folder: Path, submits: int, viewport: tuple[int, int]) -> tuple[list[float], int]:
    """Milliseconds from Submit to the next prompt on screen, per arrival, and how many never showed it."""
    from playwright.sync_api import sync_playwright

    from tests.support.app_server import Server
    from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
    from tests.support.review_page import wait_item

    server = Server(
        os.environ["BLIND_REVIEW_DATABASE_URL"], Path(os.environ["BLIND_REVIEW_DATA_DIR"]), folder / "browser.log"
    )
    times: list[float] = []
    missed = 0
    try:
        link = (folder / "links.txt").read_text().splitlines()[2]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}).new_page()
            page.goto(server.link(link))
            wait_item(page, timeout=120_000)
            for i in range(submits):
                page.locator('[role="radiogroup"]').first.locator("label").nth(i % 5).click()
                page.evaluate(_TO_BOTTOM)
                page.wait_for_timeout(300)  # a person reads before Submit; the click lands on a settled page
                ms = float(page.evaluate(_SUBMIT_TO_PROMPT))
                if ms < 0:
                    missed += 1
                else:
                    times.append(ms / 1000)
                wait_item(page, timeout=60_000)
            browser.close()
    finally:
        server.stop()
    return times, missed


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def bench_memory(folder: Path) -> tuple[int, int, int]:
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from tests.support.app_server import Server
    from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
    from tests.support.review_page import wait_item

    server = Server(
        os.environ["BLIND_REVIEW_DATABASE_URL"], Path(os.environ["BLIND_REVIEW_DATA_DIR"]), folder / "serve.log"
    )
    try:
        # `blind-review serve` runs Streamlit in a child process; that child is the server.
        children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
        pid = int(children[0]) if children else server.proc.pid
        links = (folder / "links.txt").read_text().splitlines()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            warm = browser.new_page()
            warm.goto(server.link(links[0]))
            wait_item(warm, timeout=60_000)
            warm.close()
            time.sleep(1)
            before = rss_kib(pid)
            pages = []
            for link in links:
                page = browser.new_context().new_page()
                page.goto(server.link(link))
                wait_item(page, timeout=60_000)
                pages.append(page)
            time.sleep(1)
            after = rss_kib(pid)
            browser.close()
        return before, after, len(pages)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--outputs", type=int, default=100_000)
    parser.add_argument("--submits", type=int, default=200)
    parser.add_argument("--database-url", help="default: a fresh SQLite file in a temporary folder")
    parser.add_argument("--browser-submits", type=int, default=40, help="Submits in Chromium (0: none)")
    parser.add_argument("--viewport", default="1440x900", help="browser window, WIDTHxHEIGHT")
    parser.add_argument("--no-memory", action="store_true", help="skip the 20-session memory measurement")
    parser.add_argument("--no-app", action="store_true", help="skip the server-side measurements")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
        folder = Path(tmp)
        os.environ["BLIND_REVIEW_DATA_DIR"] = str(folder / "data")
        os.environ["BLIND_REVIEW_DATABASE_URL"] = args.database_url or f"sqlite:///{folder / 'bench.db'}"
        build(folder, args.outputs)
        db = os.environ["BLIND_REVIEW_DATABASE_URL"].split(":")[0]
        if not args.no_app:
            services = bench_services(args.submits)
            app, bare = bench_app(folder, args.submits)
            print(
                f"\nSubmit -> next item ready, {args.submits} submits, {args.outputs:,} outputs / "
                f"{args.outputs * 3:,} ratings, {db}"
            )
            print(f"{'measure':<44} {'p50 ms':>8} {'p95 ms':>8}")
            rows = [
                ("services: submit_review + next_item", services),
                ("app run: Submit, save, draw next item", app),
                ("bare rerun: AppTest of an empty script", bare),
            ]
            for name, values in rows:
                print(f"{name:<44} {1000 * pct(values, 0.5):>8.1f} {1000 * pct(values, 0.95):>8.1f}")
            ours = [a - b for a, b in zip(sorted(app), sorted(bare), strict=True)]
            print(
                f"{'our work: app run minus bare rerun':<44} {1000 * pct(ours, 0.5):>8.1f} "
                f"{1000 * pct(ours, 0.95):>8.1f}   (target: p95 < 50 ms)"
            )
            print(f"{'mean of bare rerun':<44} {1000 * statistics.mean(bare):>8.1f}")
        if args.browser_submits:
            width, height = (int(x) for x in args.viewport.split("x"))
            shown, missed = bench_browser(folder, args.browser_submits, (width, height))
            print(
                f"\nChromium {width}x{height}, {args.outputs:,} outputs, {db}: Submit -> next prompt on screen, "
                f"{len(shown)} of {args.browser_submits} arrivals (load average {os.getloadavg()[0]:.1f})"
            )
            if shown:
                print(f"{'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
                print(f"{1000 * pct(shown, 0.5):>8.0f} {1000 * pct(shown, 0.95):>8.0f} {1000 * max(shown):>8.0f}")
            if missed:
                print(f"{missed} arrivals did not show the prompt within 10 s (the page kept the old scroll)")
        if not args.no_memory:
            before, after, n = bench_memory(folder)
            print(
                f"\nserver RSS: {before / 1024:.0f} MiB with one warm-up session closed, {after / 1024:.0f} MiB "
                f"with {n} open reviewer sessions: {(after - before) / n:.0f} KiB per session"
            )


if __name__ == "__main__":
    main()
