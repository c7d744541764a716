"""Benchmark: the lead's results page in headless Chromium, on a database with 300,000 ratings.

What a lead waits for on the Progress & results page (``/progress``) of a real ``blind-review serve``:

* ``readable``: from the navigation to the results' first sentence on screen (the verdict; before issue 27,
  point 11, the composite's summary, the first ranking sentence the page drew);
* ``idle``: from the navigation until the page stops running: the last moment Streamlit's "Running..." status
  was on screen (or ``readable``, if later), with none for a second after it; until then the lead's clicks
  queue behind the run.

The first visit computes the report (its cache is per server process); every later visit (a reload: a new
session, the report cached) is a *revisit*. Times are the browser's clock (``performance.now()`` polled
every animation frame in the page), from the start of the navigation.

The database is ``scripts/bench_report.py``'s simulated panel (6 models, 5 scenarios, 20 reviewers, one
Likert dimension, three ratings per output), built once under ``--db-dir`` and reused; a lead is added to it.

    python scripts/bench_results_page.py [--ratings 300000] [--revisits 5] [--viewport 1440x900]
                                         [--db-dir /tmp/bench-report]

To compare with an older commit, copy this script into a worktree of that commit and run it there with the
same ``--db-dir`` (it imports the code beside it; the database is migrated to that code's schema).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

# Polled in the page every animation frame: when the first results sentence is visible, and when the run
# ends (the status widget last seen). Resolves to [readable_ms, idle_ms] from the navigation's start.
WATCH = """
(patterns) => new Promise((resolve) => {
  let readable = null, lastRunning = null;
  const visible = () => {
    for (const el of document.querySelectorAll('[data-testid="stMarkdownContainer"]')) {
      const r = el.getBoundingClientRect();
      if (r.height > 0 && patterns.some((p) => el.innerText.includes(p))) return true;
    }
    return false;
  };
  const tick = () => {
    const now = performance.now();
    if (readable === null && visible()) readable = now;
    if (document.querySelector('[data-testid="stStatusWidget"]')) lastRunning = now;
    const idle = Math.max(readable ?? Infinity, lastRunning ?? 0);
    if (readable !== null && now - idle >= 1000) { resolve([readable, idle]); return; }
    if (now > 120000) { resolve([readable, null]); return; }
    requestAnimationFrame(tick);
  };
  tick();
})
"""
# The first results sentence: the verdict's heading now, the composite's summary before it.
PATTERNS = ["Verdict", "leads on the composite", "are tied on the composite", "on the composite;"]


def prepare(db_dir: Path, ratings: int) -> tuple[str, Path]:
    """The simulated database (built once), migrated for this code, with a lead; returns (link, data dir)."""
    import bench_report

    from reviewer_app.people.people import add_reviewer, new_link
    from storage.engine import dispose_engines, get_engine
    from storage.migrate import migrate

    db = db_dir / f"bench-{ratings // 3}-random-labels.sqlite"
    if not db.exists():
        db_dir.mkdir(parents=True, exist_ok=True)
        bench_report.build_database(db, ratings // 3)
    data = Path(tempfile.mkdtemp(prefix="bench-results-"))
    copy = data / "db.sqlite"
    shutil.copy(db, copy)
    url = f"sqlite:///{copy}"
    os.environ["BLIND_REVIEW_DATABASE_URL"] = url
    os.environ["BLIND_REVIEW_DATA_DIR"] = str(data)
    engine = get_engine(url)
    migrate(engine)
    try:
        link = add_reviewer(engine, "bench-lead", "lead")[1]
    except Exception:  # noqa: BLE001 - a copy that has the lead already
        link = new_link(engine, "bench-lead")
    dispose_engines()
    return link, data


def visit(page: object, url: str) -> tuple[float, float | None]:
    page.goto(url, wait_until="commit")  # type: ignore[attr-defined]
    readable, idle = page.evaluate(WATCH, PATTERNS)  # type: ignore[attr-defined]
    return float(readable), None if idle is None else float(idle)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ratings", type=int, default=300_000)
    parser.add_argument("--revisits", type=int, default=5)
    parser.add_argument("--viewport", default="1440x900")
    parser.add_argument("--db-dir", type=Path, default=Path("/tmp/bench-report"))
    args = parser.parse_args()
    width, height = (int(v) for v in args.viewport.split("x"))

    from playwright.sync_api import sync_playwright

    from tests.support.app_server import Server
    from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS

    link, data = prepare(args.db_dir, args.ratings)
    server = Server(os.environ["BLIND_REVIEW_DATABASE_URL"], data, data / "serve.log")
    rows: list[tuple[str, float, float | None]] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(server.link(link).replace("/?token=", "/progress?token="))  # signs in: ?session= replaces it
            page.wait_for_url("**session=*", timeout=60_000)
            target = page.url  # the page's own address with this browser's session, as a bookmark of it
            rows.append(("first visit", *visit(page, target)))
            for i in range(args.revisits):
                rows.append((f"revisit {i + 1}", *visit(page, target)))
            page.screenshot(path=str(data / "results.png"))
            browser.close()
    finally:
        server.stop()
    load = os.getloadavg()[0]
    print(f"\nresults page at {args.ratings:,} ratings, {args.viewport}, load {load:.2f} ({time.strftime('%H:%M')})")
    print("| visit | readable (s) | idle (s) |\n|---|---|---|")
    for name, readable, idle in rows:
        print(f"| {name} | {readable / 1000:.2f} | {'-' if idle is None else f'{idle / 1000:.2f}'} |")
    revisits = rows[1:]
    if revisits:
        med_r = statistics.median(r for _n, r, _i in revisits) / 1000
        idles = [i for _n, _r, i in revisits if i is not None]
        med_i = statistics.median(idles) / 1000 if idles else float("nan")
        print(f"| revisits, median | {med_r:.2f} | {med_i:.2f} |")
    print(f"\nscreenshot: {data / 'results.png'}")


if __name__ == "__main__":
    main()
