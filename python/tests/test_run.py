import json

import pytest

import mmsim
from conftest import TINY, cli


def test_a_run_is_byte_identical_to_the_command_lines_json(tiny, tmp_path, mmsim_bin):
    out = tmp_path / "run.json"
    p = cli(mmsim_bin, "run", tiny, "--kernel", "mmotm-2013-07-18", "--seed", 3, "--json", out)
    assert p.returncode == 0, p.stderr
    r = mmsim.run(tiny, kernel="mmotm-2013-07-18", seed=3)
    assert r.json_text == out.read_text()
    assert (r.kernel, r.seed, r.simulated_seconds) == ("mmotm-2013-07-18", 3, 1.0)


def test_a_scenario_as_a_string_or_a_dict_runs_as_its_file(tiny):
    from_file = mmsim.run(tiny)
    from_text = mmsim.run(TINY)
    from_dict = mmsim.run(
        {
            "machine": {"ram": "128M", "cpus": 1},
            "swap": {"size": "64M"},
            "slab": {"files": 1000},
            "run": {"duration": "1s"},
            "workload": [{"type": "mem_eater", "size": "120M"}],
        }
    )
    assert from_file.json["scenario"] == "tiny"
    assert from_text.json["scenario"] == from_dict.json["scenario"] == "scenario"
    assert from_file.row == from_text.row == from_dict.row
    assert from_file.row["vmstat.pswpout"] > 0


def test_tables_are_dataframes_of_the_json(tiny):
    r = mmsim.run(tiny, sample_interval="100ms")
    assert r.vmstat.loc["pswpout", "value"] == r.json["vmstat"]["pswpout"]
    assert r.mmtests.loc["Swap Outs", "value"] == r.json["mmtests_vmstat"]["Swap Outs"]
    faults = r.workloads.set_index(["workload", "metric"]).loc[("mem_eater", "minor_faults")]
    assert faults["value"] == r.json["workloads"]["mem_eater"]["minor_faults"]
    # Samples at 0, 0.1 ... 1.0 s.
    assert r.timeseries is not None and len(r.timeseries) == 11
    assert r.timeseries["time_s"].iloc[-1] == 1.0
    assert mmsim.run(tiny).timeseries is None


def test_set_changes_scenario_keys_and_switches(tiny):
    base = mmsim.run(tiny)
    swappy = mmsim.run(tiny, set={"vm.swappiness": 100, "machine.cpus": 2})
    assert swappy.row != base.row
    same = mmsim.run(tiny, set={("vm", "swappiness"): 60})
    assert same.row == base.row
    on = mmsim.run(tiny, set={"kswapd_shrink_zone": True})
    assert on.json["switches"]["kswapd_shrink_zone"] is True
    assert base.json["switches"]["kswapd_shrink_zone"] is False


def test_errors_are_exceptions_with_the_command_lines_message(tmp_path, mmsim_bin):
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY.replace("cpus = 1", "cpuss = 1"))
    p = cli(mmsim_bin, "run", bad)
    assert p.returncode == 2
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.run(bad)
    assert p.stderr == f"mmsim: {e.value}\n"
    assert "did you mean 'cpus'?" in str(e.value)
    with pytest.raises(mmsim.ScenarioError, match="did you mean 'swappiness'"):
        mmsim.run(TINY, set={"vm.swapiness": 1})
    with pytest.raises(mmsim.ScenarioError, match="unknown preset '3.99'"):
        mmsim.run(TINY, kernel="3.99")
    with pytest.raises(mmsim.ScenarioError, match="cannot read the file"):
        mmsim.run(tmp_path / "none.toml")
    assert issubclass(mmsim.ScenarioError, mmsim.MmsimError)


def test_reproduce_returns_the_json_and_its_claims(capfd):
    r = mmsim.reproduce("memcg-softlimit", fast=True)
    assert r.claims is not None and len(r.claims) == 7
    assert len(set(r.claims["outcome"])) >= 1 and r.claims["id"].tolist()[0] == "M1"
    out = capfd.readouterr().out
    assert "M1" in out
    with pytest.raises(mmsim.ScenarioError):
        mmsim.reproduce("no-such-experiment")
