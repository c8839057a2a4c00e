from torch.utils.data import DataLoader, DistributedSampler

from loading.volumes import RandomVolumes


def build_loaders(opts):
    dataset = RandomVolumes(64)
    sampler = DistributedSampler(dataset, shuffle=True, seed=opts.seed)
    return DataLoader(dataset, batch_size=2, sampler=sampler)
