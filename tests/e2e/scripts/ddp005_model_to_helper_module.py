"""The DDP-wrapped model (with BatchNorm buffers) is passed to `evaluate` in another module,
where every rank but 0 returns at once: rank 0 then calls the wrapper alone, and the wrapper's
buffer broadcast waits for ranks that never come.
"""

import datetime
import json
import os

import torch
import torch.distributed as dist
from e2e_evaluation import evaluate
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Points(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    train_set, val_set = Points(16), Points(6)
    loader = DataLoader(train_set, batch_size=2, sampler=DistributedSampler(train_set, shuffle=False))
    val_loader = DataLoader(val_set, batch_size=3)
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 4))
    model = DDP(net)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            steps += 1
        evaluate(model, val_loader)
        print(f"epoch {epoch} done", flush=True)
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
