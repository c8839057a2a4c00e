"""A trainer object keeps the DDP-wrapped model in an attribute; its `evaluate` method calls the
wrapped module (`self.model.module`), which synchronizes nothing, so rank 0 evaluates alone safely.
"""

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


class Trainer:
    def __init__(self, net):
        self.model = DDP(net)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.steps = 0

    def evaluate(self, loader):
        self.model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in loader:
                correct += (self.model.module(x).argmax(1) == y).sum().item()
        self.model.train()
        return correct / len(loader.dataset)

    def fit(self, loader, val_loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                self.optimizer.zero_grad()
                torch.nn.functional.cross_entropy(self.model(x), y).backward()
                self.optimizer.step()
                self.steps += 1
            if dist.get_rank() == 0:
                accuracy = self.evaluate(val_loader)
                print(f"epoch {epoch} accuracy {accuracy:.2f}", flush=True)


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    train_set, val_set = Points(16), Points(6)
    loader = DataLoader(train_set, batch_size=2, sampler=DistributedSampler(train_set, shuffle=False))
    val_loader = DataLoader(val_set, batch_size=3)
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 4))
    trainer = Trainer(net)
    trainer.fit(loader, val_loader, 3)
    checksum = sum(p.detach().double().sum() for p in trainer.model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": trainer.steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
