"""Collectives that exist only under some launch configurations (accelerate's save_state under
DeepSpeed, FSDP and Megatron-LM): said in the message and the machine-readable outputs, and
dropped when the project says what it launches with (`distributed-types`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ddplint import lint_source
from ddplint.config import ConfigError, Settings, load_settings
from ddplint.integrations.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "DDP005"
ON_MAIN = (FIXTURES / "bad_save_state_on_main_process.py").read_text(encoding="utf-8")
AUTOMATIC_NAMING = (FIXTURES / "bad_save_state_with_automatic_naming.py").read_text(encoding="utf-8")
GUARDED = (FIXTURES / "clean_save_state_guarded_for_deepspeed.py").read_text(encoding="utf-8")


def findings(text: str, types: list[str] | None = None) -> list[tuple[str, int, tuple[str, ...]]]:
    settings = Settings() if types is None else Settings(distributed_types=types)
    return [(d.code, d.location.row, d.when) for d in lint_source(text, "train.py", settings)]


def test_a_save_state_on_the_main_process_holds_under_the_sharded_types_only() -> None:
    assert findings(ON_MAIN) == [("DDP005", 10, ("FSDP", "DEEPSPEED", "MEGATRON_LM"))]
    (diagnostic,) = lint_source(ON_MAIN, "train.py")
    assert "gathers sharded state under FSDP, DeepSpeed and Megatron-LM" in diagnostic.message
    assert diagnostic.message.endswith("under plain DDP it is not a collective")


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (["DDP"], []),
        (["DDP", "XLA"], []),
        (["DEEPSPEED"], [("DDP005", 10, ("DEEPSPEED",))]),
        (["DDP", "FSDP"], [("DDP005", 10, ("FSDP",))]),
    ],
)
def test_the_project_says_what_it_launches_with(types: list[str], expected: list) -> None:
    assert findings(ON_MAIN, types) == expected


def test_automatic_checkpoint_naming_turned_on_in_the_script_makes_it_a_barrier_under_ddp() -> None:
    assert findings(AUTOMATIC_NAMING, ["DDP"]) == [("DDP005", 9, ("automatic_checkpoint_naming",))]


@pytest.mark.parametrize("types", [None, ["DDP"], ["DEEPSPEED"], ["FSDP", "DEEPSPEED"]])
def test_a_script_guarded_for_deepspeed_is_clean_whatever_it_launches_with(types) -> None:
    assert findings(GUARDED, types) == []


def test_json_and_sarif_carry_the_condition(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(ON_MAIN, encoding="utf-8")
    runner = CliRunner()
    as_json = runner.invoke(main, ["check", "--no-cache", "--output-format", "json", str(script)])
    assert [d.get("when") for d in json.loads(as_json.output)] == [["FSDP", "DEEPSPEED", "MEGATRON_LM"]]
    as_sarif = runner.invoke(main, ["check", "--no-cache", "--output-format", "sarif", str(script)])
    (result,) = json.loads(as_sarif.output)["runs"][0]["results"]
    assert result["properties"] == {"when": ["FSDP", "DEEPSPEED", "MEGATRON_LM"]}


def test_the_command_line_option_and_its_bad_values(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(ON_MAIN, encoding="utf-8")
    runner = CliRunner()
    clean = runner.invoke(main, ["check", "--no-cache", "--distributed-types", "DDP", str(script)])
    assert clean.exit_code == 0, clean.output
    bad = runner.invoke(main, ["check", "--no-cache", "--distributed-types", "DDP,HOROVOD", str(script)])
    assert bad.exit_code == 2
    assert (
        "--distributed-types takes some of DDP, FSDP, DEEPSPEED, MEGATRON_LM, XLA; got unknown type 'HOROVOD'"
        in (bad.output)
    )


def test_the_configuration_key(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.ddplint]\ndistributed-types = ["DDP", "FSDP"]\n', encoding="utf-8")
    assert load_settings(config).distributed_types == ["DDP", "FSDP"]
    config.write_text('[tool.ddplint]\ndistributed-types = ["ddp"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="`distributed-types` takes some of DDP, FSDP"):
        load_settings(config)
