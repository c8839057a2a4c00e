import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main(args, dalle, ds, vae):
    distributed = args.world_size > 1
    if distributed:
        dist.init_process_group("nccl")
        dalle = DDP(dalle.cuda(args.local_rank), device_ids=[args.local_rank])
    data_sampler = DistributedSampler(ds, num_replicas=args.world_size, rank=args.rank) if distributed else None
    dl = DataLoader(ds, batch_size=args.batch_size, shuffle=not data_sampler, drop_last=True, sampler=data_sampler)
    opt = torch.optim.Adam(dalle.parameters(), lr=args.learning_rate)
    for epoch in range(args.epochs):
        for i, (text, images) in enumerate(dl):
            text, images = text.cuda(), images.cuda()
            loss = dalle(text, images, return_loss=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(dalle.parameters(), args.clip_grad_norm)
            opt.step()
            opt.zero_grad()
            if i % 10 == 0 and args.rank == 0:
                print(epoch, i, f"loss - {loss.item()}")
