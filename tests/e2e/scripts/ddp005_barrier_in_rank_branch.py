"""Rank 0 saves a checkpoint after each epoch and then waits in a barrier the others never reach."""

import datetime
import io
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
    checkpoint = io.BytesIO()
    steps = 0
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            steps += 1
        if rank == 0:
            torch.save({"epoch": epoch, "model": model.module.state_dict()}, checkpoint)
            dist.barrier()
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
