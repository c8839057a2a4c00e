"""A small DDP training script with the classic bugs that make multi-GPU jobs hang or misbehave.

Run `ddplint check examples/` to see them.
"""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class RandomImages(Dataset):
    def __init__(self, n=1003):  # not a multiple of the world size
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, 8, 8), torch.randint(0, 10, ()).item()


def evaluate(model, loader):
    correct = torch.zeros(1)
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum()
    dist.all_reduce(correct)
    return correct.item()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    dataset = RandomImages()
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=False)
    loader = DataLoader(dataset, batch_size=2, shuffle=True, sampler=sampler, num_workers=2)
    model = DDP(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    for epoch in range(5):
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            if not torch.isfinite(loss):
                continue  # this rank skips the gradient all-reduce; the others wait in it
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch} accuracy", evaluate(model, loader))
    print("done on", local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
