from torch.utils.data import DataLoader, DistributedSampler


def make_loader(ds):
    sampler = DistributedSampler(ds)
    return DataLoader(ds, sampler=sampler), sampler
