from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def build_train_loader(dataset, args):
    sampler = DistributedSampler(dataset, num_replicas=args.world_size, rank=args.nr, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, drop_last=True, num_workers=args.workers, sampler=sampler)
    return loader, sampler
