"""The swappiness x kernel sweep of a parallelio step on a Dask cluster, plotted.

    pip install './python[dask,plot]'
    python examples/python/sweep_on_dask.py                       # a 2-worker LocalCluster
    python examples/python/sweep_on_dask.py tcp://scheduler:8786  # a running cluster

Writes swappiness.parquet (the table `mmsim sweep` would write) and swappiness.png.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from dask.distributed import Client, LocalCluster

import mmsim

SWEEP = Path(__file__).resolve().parents[1] / "sweeps" / "swappiness.toml"


def main() -> None:
    if len(sys.argv) > 1:
        client = Client(sys.argv[1])
    else:
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    with client:
        table = mmsim.sweep(SWEEP, out="swappiness.parquet", client=client)

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for kernel, runs in table.groupby("kernel"):
        runs = runs.sort_values("vm.swappiness")
        axes[0].plot(runs["vm.swappiness"], runs["mmtests_vmstat.Swap Outs"], "o-", label=kernel)
        axes[1].plot(
            runs["vm.swappiness"], runs["workloads.memcachetest.ops_per_sec"], "o-", label=kernel
        )
    axes[0].set(xlabel="vm.swappiness", ylabel="pages", title="Swap Outs")
    axes[1].set(xlabel="vm.swappiness", ylabel="ops/s", title="memcachetest")
    axes[0].legend()
    fig.suptitle("One parallelio step (seed 000's machine), 200 s")
    fig.tight_layout()
    fig.savefig("swappiness.png", dpi=100)
    print(table[["kernel", "vm.swappiness", "mmtests_vmstat.Swap Outs"]].to_string(index=False))
    print("wrote swappiness.parquet and swappiness.png")


if __name__ == "__main__":
    main()
