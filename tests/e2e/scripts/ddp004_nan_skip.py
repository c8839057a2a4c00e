"""A rank whose loss is not finite skips `backward()` with `continue`.

Sample 5 holds a NaN. The sampler does not shuffle, so only rank 1 ever sees it.
"""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class OneNaN(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        x = torch.randn(8, generator=torch.Generator().manual_seed(i))
        if i == 5:
            x[0] = float("nan")
        return x, i % 4


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = OneNaN()
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, shuffle=False))
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if not torch.isfinite(loss):
            continue
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
