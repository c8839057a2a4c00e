"""Rank 0 evaluates through `.module`, the plain model inside the DDP wrapper: no collective."""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Points(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    model.train()
    return correct / len(loader.dataset)


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    train_set, val_set = Points(16), Points(6)
    sampler = DistributedSampler(train_set, shuffle=False)
    loader = DataLoader(train_set, batch_size=2, sampler=sampler)
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
        if rank == 0:
            accuracy = evaluate(model.module, val_loader)
            print(f"epoch {epoch} accuracy {accuracy:.2f}", flush=True)
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
