"""The shuffling `DistributedSampler`, told the epoch: a new permutation every epoch."""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Indexed(Dataset):
    """Returns each sample's index with it, so the order the model sees can be observed."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(8, generator=g), i % 4, i


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = Indexed()
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler)
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    orders = []
    for epoch in range(3):
        sampler.set_epoch(epoch)
        seen = []
        for x, y, index in loader:
            seen += index.tolist()
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            steps += 1
        orders.append(seen)
        if rank == 0:
            print(f"epoch {epoch}: {seen}")
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    report = {"rank": rank, "steps": steps, "checksum": checksum.hex(), "orders": orders}
    print("E2E " + json.dumps(report), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
