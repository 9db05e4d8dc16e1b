"""mmsim: a deterministic simulator of the Linux 3.x memory-management subsystem.

Runs, reproductions and sweeps from Python, with their tables as pandas DataFrames::

    import mmsim
    r = mmsim.run("examples/anon-pressure.toml", kernel="3.9", set={"vm.swappiness": 10})
    r.mmtests.loc["Swap Outs", "value"]

    table = mmsim.sweep("examples/sweeps/swappiness.toml")                  # local cores
    table = mmsim.sweep("examples/sweeps/swappiness.toml", client=client)   # a Dask cluster

A run is a pure function of scenario, kernel and seed: the same inputs give the same bytes
as the ``mmsim`` command line. Errors are :class:`ScenarioError` (bad input, with the
command line's message: file, line, key and the nearest valid name) and
:class:`SimulationError` (a run stopped on a broken invariant).
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _core
from ._core import MmsimError, ScenarioError, SimulationError

__all__ = [
    "run",
    "reproduce",
    "sweep",
    "RunResult",
    "Reproduction",
    "MmsimError",
    "ScenarioError",
    "SimulationError",
    "__version__",
]

__version__: str = _core.version()

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Path_ = Union[str, Tuple[str, ...]]


def _scenario_text(scenario: Scenario) -> Tuple[str, str, str]:
    """(text, file, name) of a scenario given as a path, a TOML string or a dict."""
    if isinstance(scenario, Mapping):
        return _core.toml_from_json(json.dumps(scenario)), "<dict>", "scenario"
    if isinstance(scenario, os.PathLike) or (
        isinstance(scenario, str) and "\n" not in scenario and "=" not in scenario
    ):
        path = Path(scenario)
        try:
            text = path.read_text()
        except OSError as e:
            raise ScenarioError(f"{path}: cannot read the file: {e.strerror}") from None
        return text, str(path), path.stem
    if isinstance(scenario, str):
        return scenario, "<string>", "scenario"
    raise TypeError(f"a scenario is a path, a TOML string or a dict, not {type(scenario)}")


def _set_pairs(set: Optional[Mapping[Path_, Any]]) -> list:
    pairs = []
    for key, value in (set or {}).items():
        path = list(key) if isinstance(key, tuple) else key.split(".")
        pairs.append((path, json.dumps(value)))
    return pairs


def _time_ns(t: Union[str, int, float, None]) -> Optional[int]:
    if t is None:
        return None
    if isinstance(t, (int, float)):
        return int(t * 1e9)
    units = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
    for unit in ("ns", "us", "ms", "s"):
        if t.endswith(unit):
            return int(float(t[: -len(unit)]) * units[unit])
    raise ValueError(f"a time such as '1s' or '100ms', not {t!r}")


class RunResult:
    """One run's results.

    Attributes:
        json: the ``mmsim run --json`` object (a dict).
        json_text: that file's exact text, byte for byte.
        row: the run's figures flattened as a sweep row has them (column -> value).
        kernel, seed, simulated_seconds: what ran and for how long.
        vmstat: /proc/vmstat at the end, indexed by counter (column ``value``).
        mmtests: MMTests' vmstat summary rows, indexed by row name (column ``value``).
        workloads: one row per (workload, metric) with its ``value``.
        iostat: one row per (device, field) of MMTests' iostat summary.
        timeseries: the sampled time series (``sample_interval``), else None.
    """

    def __init__(self, json_text: str, record: str, series_csv: Optional[str]):
        self.json_text = json_text
        self.json: dict = json.loads(json_text)
        self.row: dict = dict(json.loads(record)["columns"])
        self.kernel: str = self.json["kernel"]
        self.seed: int = self.json["seed"]
        self.simulated_seconds: float = self.json["simulated_seconds"]
        self.vmstat = _named(self.json["vmstat"], "counter")
        self.mmtests = _named(self.json["mmtests_vmstat"], "row")
        self.workloads = pd.DataFrame(
            [
                (w, m, v)
                for w, metrics in self.json["workloads"].items()
                for m, v in metrics.items()
            ],
            columns=["workload", "metric", "value"],
        )
        self.iostat = pd.DataFrame(
            [
                (d, f, v)
                for d, dev in self.json["devices"].items()
                for f, v in dev["iostat"].items()
            ],
            columns=["device", "field", "value"],
        )
        self.timeseries = pd.read_csv(io.StringIO(series_csv)) if series_csv else None

    def __repr__(self) -> str:
        return (
            f"RunResult(kernel={self.kernel!r}, seed={self.seed}, "
            f"simulated_seconds={self.simulated_seconds})"
        )


def _named(d: Mapping[str, Any], index: str) -> pd.DataFrame:
    return pd.DataFrame({"value": list(d.values())}, index=pd.Index(list(d), name=index))


def run(
    scenario: Scenario,
    kernel: Optional[str] = None,
    seed: Optional[int] = None,
    set: Optional[Mapping[Path_, Any]] = None,
    sample_interval: Union[str, float, None] = None,
) -> RunResult:
    """Run a scenario once under one kernel, as ``mmsim run`` does.

    Args:
        scenario: a scenario file's path, its TOML text, or a dict of its tables (lists of
            dicts are arrays of tables, e.g. ``{"workload": [{"type": "dd", ...}]}``).
        kernel: a preset (``mmsim kernels`` lists them); default the scenario's, else 3.9.
        seed: the run's seed; default the scenario's ``[run] seed``.
        set: scenario keys to change first, by TOML path (``"vm.swappiness"``, or a tuple
            of keys such as ``("cgroup", "A", "memory.limit_in_bytes")``); a bare switch
            name sets that switch (``{"kswapd_shrink_zone": False}``).
        sample_interval: also sample the time series this often (``"1s"``, seconds as a
            number) into ``RunResult.timeseries``.

    Raises:
        ScenarioError: bad input, with the command line's message.
        SimulationError: the run stopped on a broken page-state invariant.
    """
    text, file, name = _scenario_text(scenario)
    out = _core.run(
        text, file, name, kernel, seed, _set_pairs(set), _time_ns(sample_interval)
    )
    return RunResult(*out)


class Reproduction:
    """A published experiment re-run (``mmsim reproduce``).

    Attributes:
        experiment: its name.
        json: the ``--json`` object of the reproduction (tables, fidelity, claims).
        claims: one row per claim (id, verdict, text...) when the experiment has claims.
    """

    def __init__(self, experiment: str, data: dict):
        self.experiment = experiment
        self.json = data
        claims = data.get("claims")
        self.claims = pd.DataFrame(claims) if isinstance(claims, list) else None

    def __repr__(self) -> str:
        return f"Reproduction({self.experiment!r})"


def reproduce(experiment: str, **options: Any) -> Reproduction:
    """Re-run a published experiment, as ``mmsim reproduce EXPERIMENT`` does; the report
    prints to stdout as on the command line.

    Options are the command line's flags with underscores: ``fast=True``, ``jobs=2``,
    ``seed=3``, ``swap_on="own-disk"``, ``html="report/"``...

    Raises:
        ScenarioError: an unknown experiment or a bad option (exit status 2).
        SimulationError: a run stopped.
    """
    args = ["reproduce", experiment]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value not in (False, None):
            args += [flag, str(value)]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "reproduction.json")
        code = _cli(args + ["--json", out])
        if code == 2:
            raise ScenarioError(f"mmsim {' '.join(args)}: bad input (its message is above)")
        if code != 0:
            raise SimulationError(f"mmsim {' '.join(args)}: exit status {code}")
        with open(out) as f:
            return Reproduction(experiment, json.load(f))


def _cli(args: Sequence[str]) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    return _core.cli(list(args))


def sweep(
    path: Union[str, "os.PathLike[str]"],
    out: Union[str, "os.PathLike[str]", None] = None,
    format: Optional[str] = None,
    points_dir: Union[str, "os.PathLike[str]", None] = None,
    jobs: Optional[int] = None,
    client: Any = None,
) -> pd.DataFrame:
    """Run a sweep file and return its table, as ``mmsim sweep`` writes it.

    Without ``client`` the points run on local cores through the command line's own code;
    with a ``dask.distributed.Client`` each point is a Dask task on its cluster, and the
    results come back into the same table. Either way finished points are kept in the
    points directory (default: ``out`` with the extension ``.points``) and not run again.

    Args:
        path: the sweep file (``docs/sweeps.md``).
        out: the table's file; default the sweep's ``output``, else ``STEM.parquet`` in
            the current directory.
        format: ``"parquet"`` or ``"csv"``; default from ``out``'s extension.
        points_dir: where finished points are kept.
        jobs: local threads (default: all CPUs); not used with ``client``.
        client: a ``dask.distributed.Client`` to run the points on.

    Raises:
        ScenarioError: a bad sweep file, with the command line's message.
    """
    from ._sweep import local_sweep, dask_sweep, paths

    sw = json.loads(_core.load_sweep(os.fspath(path)))
    out_path, points, csv = paths(path, sw, out, points_dir, format)
    if client is None:
        return local_sweep(path, out_path, points, csv, jobs)
    return dask_sweep(path, sw, out_path, points, csv, client)
