"""Seed 000's calibration sensitivity table (docs/sensitivity.md) as a sweep: each
estimated CPU cost of reclaim (per page and per pass) halved and doubled on one
parallelio step.

    pip install ./python
    python examples/python/sensitivity.py

Prints one column per variant and one row per figure, per kernel.
"""

from pathlib import Path

import pandas as pd

import mmsim

SWEEP = Path(__file__).resolve().parents[1] / "sweeps" / "sensitivity.toml"
COSTS = {
    "machine.reclaim_costs.isolate_page": "ISOLATE_PAGE_NS",
    "machine.reclaim_costs.shrink_page": "SHRINK_PAGE_NS",
    "machine.reclaim_costs.rmap_walk": "RMAP_WALK_NS",
    "machine.reclaim_costs.pageout": "PAGEOUT_NS",
    "machine.reclaim_costs.deactivate_page": "DEACTIVATE_PAGE_NS",
    "machine.reclaim_costs.shrink_lruvec": "SHRINK_LRUVEC_NS",
    "machine.reclaim_costs.shrinker_call": "SHRINKER_CALL_NS",
}
FIGURES = {
    "mmtests_vmstat.Kswapd velocity": "Kswapd velocity",
    "mmtests_vmstat.Kswapd efficiency": "Kswapd efficiency",
    "mmtests_vmstat.Swap Outs": "Swap Outs",
    "workloads.memcachetest.ops_per_sec": "memcachetest ops/s",
    "workloads.dd.io_seconds": "dd io seconds",
}


def variant(row: pd.Series) -> str:
    for column, name in COSTS.items():
        if column in row and pd.notna(row[column]):
            return f"{name}={row[column]}"
    return "baseline"


def main() -> None:
    table = mmsim.sweep(SWEEP, out="sensitivity.parquet")
    table["variant"] = table.apply(variant, axis=1)
    for kernel, runs in table.groupby("kernel", sort=False):
        view = runs.set_index("variant")[list(FIGURES)].rename(columns=FIGURES).T
        print(f"\n{kernel}")
        print(view.to_string(float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()
