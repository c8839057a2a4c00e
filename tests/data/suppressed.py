from torch.utils.data import DataLoader, DistributedSampler


def main(ds):
    sampler = DistributedSampler(ds)
    sampler.set_epoch(0)
    a = DataLoader(ds, shuffle=True, sampler=sampler)  # noqa: DDP001
    b = DataLoader(ds, shuffle=True, sampler=sampler)  # noqa: DDP002
    c = DataLoader(ds, shuffle=True, sampler=sampler)  # noqa
    d = DataLoader(ds, shuffle=True, sampler=sampler)  # noqa:DDP00 (prefix), reason
    e = DataLoader(  # noqa: DDP001
        ds,
        shuffle=True,
        sampler=sampler,
    )
    f = DataLoader(
        ds,
        shuffle=True,
        sampler=sampler,
    )
    return a, b, c, d, e, f
