"""The seed article's training script, shrunk: `shuffle=True` next to a `DistributedSampler`."""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class DummyDS(Dataset):
    def __init__(self, n=23):  # not a multiple of the world size
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(8, generator=g), i % 4


def setup():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    # Every rank has joined before any can fail: a rank that raises first would otherwise take
    # the rendezvous down under the one still connecting.
    dist.barrier()


def main():
    setup()
    rank = dist.get_rank()
    torch.manual_seed(0)
    ds = DummyDS()
    sampler = DistributedSampler(ds, shuffle=True, drop_last=False)
    loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=sampler, num_workers=2)
    model = DDP(torch.nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for epoch in range(3):
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            steps += 1
        if rank == 0:
            print(f"epoch {epoch} done")
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
