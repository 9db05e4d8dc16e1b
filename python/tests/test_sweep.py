import os
import subprocess
import sys

import pandas as pd
import pytest

import mmsim
from conftest import cli

SWEEP = """\
[sweep]
scenario = "tiny.toml"
kernels = ["3.9", "mmotm-2013-07-18"]
seeds = "1..3"

[axes]
vm.swappiness = [10, 60, 100]
"""


@pytest.fixture
def sweep_file(tiny):
    p = tiny.with_name("s.toml")
    p.write_text(SWEEP)
    return p


def row_hashes(df: pd.DataFrame) -> list:
    return pd.util.hash_pandas_object(df, index=False).tolist()


@pytest.fixture
def cli_table(sweep_file, mmsim_bin):
    """The command line's table of the sweep: its bytes and its frame."""
    out = sweep_file.with_name("cli.parquet")
    p = cli(mmsim_bin, "sweep", sweep_file, "--out", out, cwd=sweep_file.parent)
    assert p.returncode == 0, p.stderr
    return out.read_bytes(), pd.read_parquet(out)


def test_a_local_sweep_is_the_command_lines_table(sweep_file, cli_table, capfd):
    out = sweep_file.with_name("py.parquet")
    df = mmsim.sweep(sweep_file, out=out, jobs=2)
    assert out.read_bytes() == cli_table[0]
    assert row_hashes(df) == row_hashes(cli_table[1])
    assert len(df) == 18
    assert list(df.columns[:6]) == ["point", "key", "kernel", "seed", "vm.swappiness", "error"]
    assert df["error"].isna().all()
    assert df["vmstat.pswpout"].dtype == "int64"
    # Again: every point is found finished.
    capfd.readouterr()
    mmsim.sweep(sweep_file, out=out)
    assert "18 finished earlier" in capfd.readouterr().err


def test_a_sweep_on_a_two_worker_local_cluster_gives_identical_rows(sweep_file, cli_table, capfd):
    from dask.distributed import Client, LocalCluster

    out = sweep_file.with_name("dask.parquet")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster:
        with Client(cluster) as client:
            df = mmsim.sweep(sweep_file, out=out, client=client)
            assert "0 finished earlier" in capfd.readouterr().err
            assert out.read_bytes() == cli_table[0]
            assert row_hashes(df) == row_hashes(cli_table[1])
            # Resumed: nothing is sent to the cluster.
            mmsim.sweep(sweep_file, out=out, client=client)
            err = capfd.readouterr().err
            assert "18 finished earlier" in err and ", 0 to run on Dask at tcp://" in err, err


def test_mmsim_sweep_dask_hands_the_sweep_to_python(sweep_file, cli_table, mmsim_bin):
    from dask.distributed import LocalCluster

    out = sweep_file.with_name("handed.parquet")
    env = dict(os.environ, MMSIM_PYTHON=sys.executable)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster:
        p = cli(
            mmsim_bin, "sweep", sweep_file, "--dask", cluster.scheduler_address, "--out", out,
            cwd=sweep_file.parent, env=env,
        )
    assert p.returncode == 0, p.stderr
    assert "to run on Dask at" in p.stderr
    assert out.read_bytes() == cli_table[0]


def test_a_bad_sweep_raises_with_the_command_lines_message(tiny, mmsim_bin):
    bad = tiny.with_name("bad.toml")
    bad.write_text(SWEEP.replace("vm.swappiness", "vm.swapiness"))
    p = cli(mmsim_bin, "sweep", bad, cwd=tiny.parent)
    assert p.returncode == 2
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.sweep(bad)
    assert p.stderr == f"mmsim: {e.value}\n"
    assert "(did you mean 'swappiness'?)" in str(e.value)
