import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data import make_train_loader


def run(model, dataset, cfg):
    dist.init_process_group("nccl")
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    loader = make_train_loader(dataset, rank, world_size, cfg.micro_batch)
    for batch in loader:
        loss = model(batch["input_ids"].cuda(), labels=batch["labels"].cuda()).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    if rank == 0:
        print("training complete")
