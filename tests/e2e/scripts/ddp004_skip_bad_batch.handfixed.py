"""Skip-bad-batch, agreed first: every rank learns whether any rank saw a bad batch, then all skip it."""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class WithCorruptSample(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(8, generator=g), -1 if i == 5 else i % 4


def batch_is_invalid(labels):
    return bool((labels < 0).any())


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = WithCorruptSample()
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, shuffle=False))
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in loader:
        flag = torch.tensor([int(batch_is_invalid(y))])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item():
            continue
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        steps += 1
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
