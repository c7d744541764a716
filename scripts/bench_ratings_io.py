"""Benchmark: `blind-review import-ratings` and `export-ratings` as whole processes, before and after.

For each size it builds, once, a rating-mode batch of N/3 outputs (5 models, k = 3, one Likert dimension)
and a ratings CSV of N rows (every output rated by 3 of 30 reviewers), then times, alternating the two
code trees: the import into a fresh copy of the database, then CSV and JSONL exports of the same imported
database. Wall time and peak RSS are the operating system's accounting of each child process (``wait4``),
start-up included. Each code tree runs its own ``blind-review`` (``PYTHONPATH`` first), so ``--base`` must be
a worktree of the starting commit, e.g. ``git worktree add /tmp/base 0c7315f``. An import that runs past
``--timeout`` is killed and reported as not finished.

The base tree cannot open a database migrated past its own newest revision, so the databases are built with
the base code and migrated by this tree for its own runs. When the base import does not finish, both
exports read a database imported by this tree's import service (with the base schema, so both trees can
open it); the digest tests show the two imports store the same content.

    python scripts/bench_ratings_io.py --base /tmp/base --work /tmp/rio-bench --ratings 300000 3000000
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
MODELS = 5
REVIEWERS = 30
RUBRIC = """mode = "rating"
overlap = 3
seed = 11
[[dimensions]]
name = "correctness"
description = "Is every fact right?"
scale = "likert"
min = 1
max = 5
level = "ordinal"
"""
CLI = "import sys; from reviewer_app.cli.main import main; sys.exit(main())"
# The new import service on a database of the base schema, without migrating it (see the module docstring).
IMPORT_UNMIGRATED = (
    "import sys; from pathlib import Path; from storage.engine import get_engine; "
    "from reviewer_app.ratings.files import import_ratings; "
    "print(import_ratings(get_engine(sys.argv[1]), 'bench', Path(sys.argv[2])).lines()[0])"
)


@dataclass
class Run:
    wall: float | None  # None: killed at the time limit
    cpu: float  # user + system seconds of the child
    peak_mb: float
    code: int


def run(cmd: list[str], tree: Path, db: Path, timeout: float, out: Path | None = None) -> Run:
    """One child process with ``tree`` first on its path; wall time and its own peak RSS from wait4."""
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(tree),
        BLIND_REVIEW_DATABASE_URL=f"sqlite:///{db}",
        BLIND_REVIEW_DATA_DIR=str(db.parent / "data"),
        BLIND_REVIEW_LOG_LEVEL="WARNING",
    )
    sink = out.open("wb") if out is not None else subprocess.DEVNULL
    start = time.perf_counter()
    err_file = db.parent / "stderr.txt"
    with err_file.open("wb") as err_sink:
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=sink, stderr=err_sink, start_new_session=True)
    killed = False
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
    except BaseException:  # interrupted: take the child down with us
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = err_file.read_text(errors="replace")
    if out is not None and hasattr(sink, "close"):
        sink.close()
    if proc.returncode and not killed:
        print(f"  {' '.join(cmd[-4:])} in {tree} failed ({proc.returncode}): {err[-2000:]}", file=sys.stderr)
    return Run(None if killed else wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode)


def cli(*args: str) -> list[str]:
    return [PYTHON, "-c", CLI, *args]


def sha(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def fresh_copy(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(dst) + suffix).unlink(missing_ok=True)
    shutil.copyfile(src, dst)


def write_inputs(folder: Path, n_ratings: int) -> None:
    outputs = n_ratings // 3
    rng = random.Random(5)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "batch.jsonl").open("w", encoding="utf-8") as f:
        for i in range(outputs // MODELS):
            for m in range(MODELS):
                f.write(
                    f'{{"sample_id": "s{i}", "scenario": "sc{i % 5}", "prompt": "Question {i}?", '
                    f'"model": "model-{m}", "output": "Answer {i} of model {m}: {rng.random():.6f}"}}\n'
                )
    (folder / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    with (folder / "ratings.csv").open("w", encoding="utf-8") as f:
        f.write("reviewer,sample_id,model,dimension,score\n")
        for i in range(outputs // MODELS):
            for m in range(MODELS):
                for j in range(3):
                    reviewer = (i * MODELS + m + 10 * j) % REVIEWERS
                    f.write(f"panel-{reviewer:02d},s{i},model-{m},correctness,{rng.randint(1, 5)}\n")


def build(folder: Path, n_ratings: int, base: Path) -> None:
    """The inputs and the base-schema database with the batch loaded (reused when already there)."""
    if not (folder / "ratings.csv").exists():
        t = time.perf_counter()
        write_inputs(folder, n_ratings)
        print(f"  wrote inputs for {n_ratings:,} ratings in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    db = folder / "base.sqlite"
    if not db.exists():
        tmp = folder / "building.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        t = time.perf_counter()
        r = run(
            cli("load-batch", str(folder / "batch.jsonl"), "--rubric", str(folder / "rubric.toml"), "--name", "bench"),
            base,
            tmp,
            3600,
        )
        if r.code:
            raise SystemExit("loading the batch with the base code failed")
        tmp.rename(db)
        print(
            f"  loaded {n_ratings // 3:,} outputs with the base code in {time.perf_counter() - t:.0f} s",
            file=sys.stderr,
        )


def migrated(src: Path, dst: Path) -> None:
    """A copy of ``src`` brought to this tree's newest schema."""
    if dst.exists():
        return
    tmp = dst.with_suffix(".tmp")
    fresh_copy(src, tmp)
    if run(cli("init"), ROOT, tmp, 3600).code:
        raise SystemExit("migrating with this tree failed")
    tmp.rename(dst)


def fmt(r: Run | None, timeout: float) -> tuple[str, str, str]:
    if r is None:
        return "—", "—", "—"
    if r.wall is None:
        return f"did not finish in {timeout:.0f} s", f"{r.cpu:.1f} (when killed)", f"{r.peak_mb:,.0f} (when killed)"
    return f"{r.wall:.1f}", f"{r.cpu:.1f}", f"{r.peak_mb:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="worktree of the starting commit")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-ratings-io"))
    parser.add_argument("--ratings", type=int, nargs="+", default=[300_000])
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before an import is killed")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--skip-base-import",
        type=int,
        nargs="*",
        default=[],
        help="sizes whose base import is known not to finish: not run again",
    )
    parser.add_argument(
        "--skip-import", type=int, nargs="*", default=[], help="sizes whose imports were timed already: exports only"
    )
    parser.add_argument("--build-only", action="store_true", help="build the inputs and databases, time nothing")
    args = parser.parse_args()
    trees = {"before": args.base.resolve(), "after": ROOT}
    table: list[tuple[str, ...]] = []
    for n in args.ratings:
        folder = args.work / str(n)
        print(f"{n:,} ratings: building (once)", file=sys.stderr)
        build(folder, n, trees["before"])
        if args.build_only:
            continue
        migrated(folder / "base.sqlite", folder / "after.sqlite")
        loads = [os.getloadavg()[0]]
        imports: dict[str, list[Run]] = {"before": [], "after": []}
        digests: dict[str, set[str]] = {"before": set(), "after": set()}
        for rep in range(args.repeat):
            order = ["before", "after"] if rep % 2 == 0 else ["after", "before"]
            for who in order:
                if (who == "before" and n in args.skip_base_import) or n in args.skip_import:
                    continue
                scratch = folder / f"import-{who}.sqlite"
                fresh_copy(folder / ("base.sqlite" if who == "before" else "after.sqlite"), scratch)
                print(f"  import, {who} (load {os.getloadavg()[0]:.2f})", file=sys.stderr)
                r = run(cli("import-ratings", "bench", str(folder / "ratings.csv")), trees[who], scratch, args.timeout)
                print(f"    {fmt(r, args.timeout)}", file=sys.stderr)
                imports[who].append(r)
                loads.append(os.getloadavg()[0])
                if r.wall is not None and r.code == 0:
                    if who == "before":  # a finished base import: the exports read a copy of its database
                        (folder / "import-before.ok").touch()
                    out = folder / f"check-{who}.csv"
                    run(cli("export-ratings", "bench", "--format", "csv", "--out", str(out)), trees[who], scratch, 3600)
                    digests[who].add(sha(out))
        # The exports read one imported database, in the base schema for the base tree, migrated for ours.
        exported = folder / "exported-base.sqlite"
        if not exported.exists():
            if (folder / "import-before.ok").exists():
                fresh_copy(folder / "import-before.sqlite", exported)
            else:
                fresh_copy(folder / "base.sqlite", exported)
                cmd = [PYTHON, "-c", IMPORT_UNMIGRATED, f"sqlite:///{exported}", str(folder / "ratings.csv")]
                print("  importing the export database with this tree's service (base schema)", file=sys.stderr)
                r = run(cmd, ROOT, exported, 3600)
                print(f"    {fmt(r, 3600)}", file=sys.stderr)
                if r.code:
                    raise SystemExit("importing the export database failed")
        migrated(exported, folder / "exported-after.sqlite")
        exports: dict[tuple[str, str], list[Run]] = {}
        export_digests: dict[tuple[str, str], set[str]] = {}
        for rep in range(args.repeat):
            for fmt_name in ("csv", "jsonl"):
                order = ["before", "after"] if rep % 2 == 0 else ["after", "before"]
                for who in order:
                    db = folder / ("exported-base.sqlite" if who == "before" else "exported-after.sqlite")
                    out = folder / f"export-{who}.{fmt_name}"
                    print(f"  export {fmt_name}, {who} (load {os.getloadavg()[0]:.2f})", file=sys.stderr)
                    r = run(
                        cli("export-ratings", "bench", "--format", fmt_name, "--out", str(out)), trees[who], db, 3600
                    )
                    exports.setdefault((fmt_name, who), []).append(r)
                    export_digests.setdefault((fmt_name, who), set()).add(sha(out))
                    loads.append(os.getloadavg()[0])
        load = f"{min(loads):.2f}-{max(loads):.2f}"

        def best(runs: list[Run]) -> Run | None:
            finished = [r for r in runs if r.wall is not None]
            if finished:
                return min(finished, key=lambda r: r.wall or 0.0)
            return runs[0] if runs else None

        same_import = (
            "same bytes"
            if digests["before"] and digests["before"] == digests["after"]
            else ("—" if not digests["before"] else "DIFFERENT")
        )
        for who in ("before", "after") if n not in args.skip_import else ():
            wall, cpu, peak = fmt(best(imports[who]), args.timeout)
            if who == "before" and n in args.skip_base_import:
                wall, cpu, peak = "not run (did not finish before)", "—", "—"
            same = same_import if who == "after" else ""
            table.append((f"{n:,}", "import-ratings", who, wall, cpu, peak, same, load))
        for fmt_name in ("csv", "jsonl"):
            same = (
                "same bytes"
                if export_digests[(fmt_name, "before")] == export_digests[(fmt_name, "after")]
                and len(export_digests[(fmt_name, "after")]) == 1
                else "DIFFERENT"
            )
            for who in ("before", "after"):
                wall, cpu, peak = fmt(best(exports[(fmt_name, who)]), args.timeout)
                same_bytes = same if who == "after" else ""
                table.append((f"{n:,}", f"export-ratings {fmt_name}", who, wall, cpu, peak, same_bytes, load))
    print(f"\n{os.cpu_count()} cores; load = 1-minute average over the runs; best of {args.repeat} run(s)\n")
    print("| ratings | command | code | wall s | CPU s | peak RSS MB | output vs before | load |")
    print("|---|---|---|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
