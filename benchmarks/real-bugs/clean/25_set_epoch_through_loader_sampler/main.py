import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from engine import train_one_epoch


def main(net, dataset, args):
    distributed = dist.is_available() and dist.is_initialized()
    sampler = DistributedSampler(dataset) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=(sampler is None), sampler=sampler, num_workers=8)
    device = torch.device("cuda", args.local_rank)
    model = DDP(net.to(device), device_ids=[args.local_rank]) if distributed else net.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, optimizer, epoch, device)
