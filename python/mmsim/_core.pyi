"""The native module: thin calls into the mmsim library and command line."""

from typing import List, Optional, Sequence, Tuple

class MmsimError(Exception):
    """Something mmsim could not do; the message is the command line's."""

class ScenarioError(MmsimError):
    """Bad input: a scenario or sweep file, a key, a preset or a switch."""

class SimulationError(MmsimError):
    """A run stopped: a broken page-state invariant names the invariant and the page."""

def toml_from_json(json_text: str) -> str: ...
def run(
    text: str,
    file: str,
    name: str,
    kernel: Optional[str] = None,
    seed: Optional[int] = None,
    set: Sequence[Tuple[Sequence[str], str]] = ...,
    sample_interval: Optional[int] = None,
) -> Tuple[str, str, Optional[str]]: ...
def load_sweep(path: str) -> str: ...
def run_point(point_json: str) -> str: ...
def sweep_table(path: str, records: List[str], csv: bool = False) -> bytes: ...
def store_get(dir: str, key: str) -> Optional[str]: ...
def store_put(dir: str, key: str, record: str) -> None: ...
def cli(args: List[str]) -> int: ...
def version() -> str: ...
