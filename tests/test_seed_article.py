"""The training script from the article ddplint grew from: both its data-loading bugs found and fixed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

DDPLINT = str(Path(sys.executable).with_name("ddplint"))

# The buggy script of the article, rewritten small: a sampler that shuffles, `shuffle=True` on the
# loader as well, and no `set_epoch` in the epoch loop.
SCRIPT = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Noise(Dataset):
    def __init__(self, n=1003):  # not a multiple of the world size
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, 8, 8), torch.randint(0, 10, ())


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    ds = Noise()
    sampler = DistributedSampler(ds, shuffle=True, drop_last=False)
    loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=sampler, num_workers=4)
    model = DDP(torch.nn.Linear(3 * 8 * 8, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x.view(x.size(0), -1)), y)
            loss.backward()
            opt.step()
        if rank == 0:
            print(f"epoch {epoch} done", os.getpid())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


def line_of(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if line.strip().startswith(start))


def check_json(path: Path) -> tuple[int, list[dict]]:
    done = subprocess.run(
        [DDPLINT, "check", "--output-format", "json", path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)


def fix(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DDPLINT, "check", "--fix", path.name], cwd=path.parent, capture_output=True, text=True, check=False
    )


def test_both_bugs_are_found(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    code, findings = check_json(script)
    assert code == 1
    assert [(f["code"], f["location"]["row"]) for f in findings] == [
        ("DDP002", line_of(SCRIPT, "sampler = DistributedSampler(")),
        ("DDP001", line_of(SCRIPT, "loader = DataLoader(")),
    ]
    assert "mutually exclusive with shuffle" in findings[1]["message"]
    assert "same permutation" in findings[0]["message"]


def test_fix_removes_both_and_is_stable(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    first = fix(script)
    assert first.returncode == 0
    assert first.stdout == "Found 2 errors (2 fixed, 0 remaining).\n"
    fixed = script.read_text(encoding="utf-8")
    ast.parse(fixed)
    expected = SCRIPT.replace("batch_size=2, shuffle=True, sampler", "batch_size=2, sampler").replace(
        "    for epoch in range(5):\n", "    for epoch in range(5):\n        sampler.set_epoch(epoch)\n"
    )
    assert fixed == expected
    assert check_json(script) == (0, [])

    before = script.stat().st_mtime_ns
    second = fix(script)
    assert (second.returncode, second.stdout) == (0, "All checks passed!\n")
    assert script.read_text(encoding="utf-8") == fixed
    assert script.stat().st_mtime_ns == before
