import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def init_distributed(model, dataset, opt):
    if torch.cuda.device_count() > 1:
        dist.init_process_group(backend=opt.backend, init_method=opt.dist_url, world_size=opt.world_size, rank=opt.rank)
        model = torch.nn.parallel.DistributedDataParallel(model)
        sampler = DistributedSampler(dataset)
    else:
        sampler = None
    return model, sampler


def train(model, dataset, opt):
    model, sampler = init_distributed(model, dataset, opt)
    dataloader = DataLoader(
        dataset,
        batch_size=opt.batch_size,
        num_workers=opt.num_workers,
        shuffle=True,
        pin_memory=True,
        collate_fn=dataset.collate_fn,
        sampler=sampler,
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.lr, momentum=0.9)
    for epoch in range(opt.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for imgs, targets, paths, _ in dataloader:
            loss = model(imgs.cuda(), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
