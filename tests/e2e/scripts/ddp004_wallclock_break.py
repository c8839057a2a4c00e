"""A time budget checked with `break` on each rank's own clock, before `backward()`.

Rank 1 reads from slow storage (odd samples take 0.6 s), so its clock passes the budget one
step before rank 0's does, although both started together.
"""

import datetime
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

BUDGET = 0.9  # seconds


class SlowOddSamples(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i % 2:
            time.sleep(0.6)
        return torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = SlowOddSamples()
    loader = DataLoader(dataset, batch_size=1, sampler=DistributedSampler(dataset, shuffle=False))
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    dist.barrier()
    start = time.time()
    for x, y in loader:
        if time.time() - start > BUDGET:
            break
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
