"""Sweeps from Python: on local cores through the command line's own code, or on a Dask
cluster with one task per point. Both keep finished points in the same points directory
and build the table with the same code, so their tables are identical."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pandas as pd

from . import _core


def paths(path, sw: dict, out, points_dir, format) -> Tuple[Path, Path, bool]:
    """The table's path, the points directory and whether the table is CSV, chosen as
    ``mmsim sweep`` chooses them."""
    if out is None:
        out = sw["output"] or f"{Path(path).stem}.parquet"
    out = Path(out)
    csv = format == "csv" if format else out.suffix.lower() == ".csv"
    if format not in (None, "csv", "parquet"):
        raise _core.ScenarioError(f"format: 'parquet' or 'csv', not {format!r}")
    points = Path(points_dir) if points_dir is not None else out.with_suffix(".points")
    return out, points, csv


def _read(out: Path, csv: bool) -> pd.DataFrame:
    return pd.read_csv(out) if csv else pd.read_parquet(out)


def local_sweep(path, out: Path, points: Path, csv: bool, jobs: Optional[int]) -> pd.DataFrame:
    args = ["sweep", os.fspath(path), "--out", os.fspath(out), "--points-dir", os.fspath(points)]
    args += ["--format", "csv" if csv else "parquet"]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    sys.stdout.flush()
    sys.stderr.flush()
    code = _core.cli(args)
    if code == 2:
        raise _core.ScenarioError(f"mmsim {' '.join(args)}: bad input (its message is above)")
    if code != 0:
        raise _core.MmsimError(f"mmsim {' '.join(args)}: exit status {code}")
    return _read(out, csv)


def run_point(point_json: str) -> str:
    """The Dask task: one point to its record (runs on a worker; needs mmsim installed
    there)."""
    return _core.run_point(point_json)


def dask_sweep(path, sw: dict, out: Path, points: Path, csv: bool, client: Any) -> pd.DataFrame:
    import json

    from dask.distributed import as_completed

    todo: List[dict] = []
    seen = set()
    finished = 0
    for p in sw["points"]:
        if p["key"] in seen:
            continue
        seen.add(p["key"])
        if _core.store_get(os.fspath(points), p["key"]) is not None:
            finished += 1
        else:
            todo.append(p)
    print(
        f"sweep {os.fspath(path)}: {len(sw['points'])} points, {finished} finished earlier "
        f"({os.fspath(points)}), {len(todo)} to run on Dask at {client.scheduler.address}",
        file=sys.stderr,
    )
    # One task per point, named by its key: Dask schedules, retries and moves the data.
    futures = client.map(
        run_point,
        [json.dumps(p) for p in todo],
        key=[f"mmsim-point-{p['key']}" for p in todo],
        retries=2,
    )
    keys = {f.key: p["key"] for f, p in zip(futures, todo)}
    start, done = time.monotonic(), 0
    for future in as_completed(futures):
        _core.store_put(os.fspath(points), keys[future.key], future.result())
        done += 1
        if sys.stderr.isatty():
            print(
                f"\r{done}/{len(todo)} points {time.monotonic() - start:.0f}s",
                end="",
                file=sys.stderr,
            )
    if sys.stderr.isatty() and todo:
        print(file=sys.stderr)
    records = [_core.store_get(os.fspath(points), p["key"]) for p in sw["points"]]
    data = _core.sweep_table(os.fspath(path), records, csv)
    out.write_bytes(data)
    print(f"wrote {os.fspath(out)} ({len(sw['points'])} rows)", file=sys.stderr)
    return _read(out, csv)
