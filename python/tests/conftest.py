import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TINY = """\
[machine]
ram = "128M"
cpus = 1

[swap]
size = "64M"

[slab]
files = 1000

[run]
duration = "1s"

[[workload]]
type = "mem_eater"
size = "120M"
"""


@pytest.fixture
def tiny(tmp_path) -> Path:
    """A machine that runs in milliseconds, in a directory of the test's own."""
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


@pytest.fixture(scope="session")
def mmsim_bin() -> str:
    """The command line to compare with: $MMSIM_BIN, else the workspace's release build."""
    b = os.environ.get("MMSIM_BIN") or str(ROOT / "target" / "release" / "mmsim")
    if not Path(b).exists():
        b = shutil.which("mmsim") or ""
    if not b:
        pytest.fail("no mmsim binary: build it (cargo build --release) or set MMSIM_BIN")
    return b


def cli(mmsim_bin: str, *args, cwd=None, env=None):
    return subprocess.run(
        [mmsim_bin, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True
    )
