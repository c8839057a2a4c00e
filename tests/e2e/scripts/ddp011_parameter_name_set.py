"""Gradients averaged by hand over the names of the trainable parameters, kept in a set: each rank
is its own Python process with its own string-hash seed, so each walks the set in another order
and all-reduces a gradient of one shape against a gradient of another.
"""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Points(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4


def average_gradients(model, world_size):
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    params = dict(model.named_parameters())
    for name in trainable:
        dist.all_reduce(params[name].grad)
        params[name].grad /= world_size


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    dataset = Points()
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, shuffle=False))
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        average_gradients(model, world_size)
        optimizer.step()
        steps += 1
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
