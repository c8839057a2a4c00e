"""After training, the epoch's sums are all-reduced key by key in sorted order: every rank reduces
the same sum at the same step, whatever its string-hash seed, and the ranks finish with the
same metrics.
"""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Points(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = Points()
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, shuffle=False))
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    stats = {"epoch": 0, "loss_sum": torch.zeros(1), "correct": torch.zeros(1), "seen": torch.zeros(1)}
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y, reduction="sum")
        loss.backward()
        optimizer.step()
        stats["loss_sum"] += loss.detach()
        stats["correct"] += (logits.argmax(1) == y).sum()
        stats["seen"] += len(y)
        steps += 1
    for key in sorted(stats.keys() - {"epoch"}):
        dist.all_reduce(stats[key])
    mean_loss = (stats["loss_sum"] / stats["seen"]).item()
    accuracy = (stats["correct"] / stats["seen"]).item()
    checksum = f"{mean_loss.hex()} {accuracy.hex()}"
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
