import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from checkpoints import Checkpointer


def main(model, loader, sampler, optimizer, epochs, save_dir):
    rank = int(os.environ["SLURM_PROCID"])
    world_size = int(os.environ["SLURM_NTASKS"])
    local_rank = int(os.environ["SLURM_LOCALID"])
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    checkpointer = Checkpointer(save_dir, {"model": model, "optimizer": optimizer})
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(batch.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            checkpointer.save_and_keep_only({"epoch": epoch})
