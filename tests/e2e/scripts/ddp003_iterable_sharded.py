"""An `IterableDataset` that shards a finite stream by rank: 7 records, rank 0 gets 4, rank 1 gets 3."""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


class Records(IterableDataset):
    def __init__(self, n=7):
        self.n = n

    def __iter__(self):
        rank, world = dist.get_rank(), dist.get_world_size()
        for i in range(self.n):
            if i % world != rank:
                continue
            yield torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    loader = DataLoader(Records(), batch_size=1)
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        steps += 1
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
