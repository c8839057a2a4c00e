"""After training, the other ranks `return`; rank 0 then all-reduces the epoch losses alone."""

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


def train():
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = Points()
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, shuffle=False))
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total = torch.zeros(1)
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.detach()
        steps += 1
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    if rank != 0:
        return
    dist.all_reduce(total)
    print(f"mean loss over ranks {total.item() / dist.get_world_size() / steps:.4f}")


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    train()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
