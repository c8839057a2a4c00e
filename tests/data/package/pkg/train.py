from torch.utils.data import DataLoader, DistributedSampler

from .helpers import reshuffle


def main(ds):
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=2, sampler=sampler)
    for epoch in range(5):
        reshuffle(sampler, epoch)
        for x, y in loader:
            x.sum().backward()
