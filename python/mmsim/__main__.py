"""``python -m mmsim ARGS``: the ``mmsim`` command line, plus ``sweep --dask ADDRESS``,
which runs the sweep's points on the Dask scheduler at ADDRESS (``mmsim sweep --dask``
hands itself to this)."""

import argparse
import sys

from . import _core, sweep


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sweep"] and any(a == "--dask" or a.startswith("--dask=") for a in argv):
        p = argparse.ArgumentParser(prog="mmsim sweep")
        p.add_argument("sweep")
        p.add_argument("--dask", required=True, metavar="ADDRESS")
        p.add_argument("--out")
        p.add_argument("--format", choices=["parquet", "csv"])
        p.add_argument("--points-dir")
        a = p.parse_args(argv[1:])
        from dask.distributed import Client

        try:
            with Client(a.dask) as client:
                sweep(a.sweep, out=a.out, format=a.format, points_dir=a.points_dir, client=client)
        except _core.ScenarioError as e:
            print(f"mmsim: {e}", file=sys.stderr)
            return 2
        return 0
    return _core.cli(argv)


if __name__ == "__main__":
    sys.exit(main())
