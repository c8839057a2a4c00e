"""Each rank takes its own slice of the data by hand, `samples[rank::world]`, with `drop_last=True`.

11 samples: rank 0 gets 6 (3 full batches of 2), rank 1 gets 5 (2 full batches, the last sample
is dropped). Rank 0's third `backward()` waits for a gradient all-reduce rank 1 never starts.
"""

import datetime
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def make_samples(n=11):
    return [(torch.randn(8, generator=torch.Generator().manual_seed(i)), i % 4) for i in range(n)]


def main():
    timeout = datetime.timedelta(seconds=float(os.environ["DDPLINT_E2E_PG_TIMEOUT"]))
    dist.init_process_group("gloo", timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    shard = make_samples()[rank::world]
    loader = DataLoader(shard, batch_size=2, drop_last=True)
    model = DDP(torch.nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        steps += 1
    checksum = sum(p.detach().double().sum() for p in model.parameters()).item()
    print("E2E " + json.dumps({"rank": rank, "steps": steps, "checksum": checksum.hex()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print("E2E-END", flush=True)


if __name__ == "__main__":
    main()
