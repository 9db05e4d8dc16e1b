"""Points per second of one sweep run locally and on a Dask LocalCluster with as many
workers as local threads, and the cluster's overhead per point as a share of a point's run
time. Each side runs the sweep from an empty points directory REPEATS times, alternately;
the figures are medians, with the range. The workers import mmsim before the clock starts
(a cost per worker, not per point).

    python examples/python/throughput.py [SWEEP.toml] [WORKERS] [REPEATS]
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

from dask.distributed import Client, LocalCluster

import mmsim

ROOT = Path(__file__).resolve().parents[2]


def timed(d: str, name: str, sweep: str, **kw) -> float:
    start = time.monotonic()
    mmsim.sweep(sweep, out=f"{d}/{name}.parquet", **kw)
    return time.monotonic() - start


def main() -> None:
    sweep = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "examples/sweeps/seeds.toml")
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    local, remote, same, n = [], [], True, 0
    with LocalCluster(
        n_workers=workers, threads_per_worker=1, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("mmsim") and None)
        for r in range(repeats):
            with tempfile.TemporaryDirectory() as d:
                local.append(timed(d, "local", sweep, jobs=workers))
                remote.append(timed(d, "dask", sweep, client=client))
                a = Path(f"{d}/local.parquet").read_bytes()
                same &= a == Path(f"{d}/dask.parquet").read_bytes()
                n = len(mmsim.sweep(sweep, out=f"{d}/local.parquet"))
    t_local, t_dask = statistics.median(local), statistics.median(remote)
    per_point = t_local * workers / n
    overhead = (t_dask - t_local) * workers / n
    span = lambda ts: f"{min(ts):.2f}-{max(ts):.2f} s"
    print(f"{n} points, {workers} workers, {repeats} repeats; tables identical: {same}")
    print(
        f"local:        {t_local:6.2f} s ({span(local)})  {n / t_local:.3f} points/s  "
        f"({per_point:.2f} s a point)"
    )
    print(f"LocalCluster: {t_dask:6.2f} s ({span(remote)})  {n / t_dask:.3f} points/s")
    print(f"overhead per point: {overhead:.3f} s = {100 * overhead / per_point:.1f}% of a point")


if __name__ == "__main__":
    main()
