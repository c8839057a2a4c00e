"""After training, rank 0 waits in a barrier before it all-reduces the loss sum; the other ranks
all-reduce first and meet the barrier after: the same collectives, in another order.
"""

import datetime
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


def mean_over_ranks(loss_sum, count):
    if dist.get_rank() == 0:
        dist.barrier()  # until every rank has finished its epoch
        dist.all_reduce(loss_sum)
    else:
        dist.all_reduce(loss_sum)
        dist.barrier()
    dist.all_reduce(count)
    return (loss_sum / count).item()


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank = dist.get_rank()
    torch.manual_seed(0)
    dataset = Points()
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, shuffle=False))
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_sum, count = torch.zeros(1), torch.zeros(1)
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y, reduction="sum")
        loss.backward()
        optimizer.step()
        loss_sum += loss.detach()
        count += len(y)
        steps += 1
    mean_loss = mean_over_ranks(loss_sum, count)
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": mean_loss.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
