import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main(ds):
    sampler = DistributedSampler(ds, shuffle=True, drop_last=False)
    loader = DataLoader(ds, batch_size=2, shuffle=True, sampler=sampler, num_workers=4)
    for epoch in range(5):
        for x, y in loader:
            x.sum().backward()
    dist.destroy_process_group()
