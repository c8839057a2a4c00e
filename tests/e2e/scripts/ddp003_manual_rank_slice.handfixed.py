"""The same data, split by a `DistributedSampler`: it pads every rank to ceil(11 / 2) = 6 samples."""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def make_samples(n=11):
    return [(torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4) for i in range(n)]


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    samples = make_samples()
    sampler = DistributedSampler(samples, shuffle=False, drop_last=False)
    loader = DataLoader(samples, batch_size=2, sampler=sampler, drop_last=True)
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
