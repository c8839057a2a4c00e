import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from evaluate import validate
from model import Net
from data import build_datasets


def worker(gpu, args):
    rank = args.node_rank * args.gpus + gpu
    dist.init_process_group("nccl", init_method="env://", world_size=args.world_size, rank=rank)
    torch.cuda.set_device(gpu)
    model = DDP(Net().cuda(gpu), device_ids=[gpu])
    train_set, val_set = build_datasets(args.data_root)
    sampler = DistributedSampler(train_set, num_replicas=args.world_size, rank=rank)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, num_workers=4)
    criterion = nn.CrossEntropyLoss().cuda(gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, labels in train_loader:
            images = images.cuda(gpu, non_blocking=True)
            labels = labels.cuda(gpu, non_blocking=True)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if gpu == 0:
            acc = validate(model, val_loader, gpu)
            print(f"epoch {epoch}: val acc {acc:.3f}")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--node-rank", dest="node_rank", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", dest="batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--data-root", dest="data_root", default="./data")
    args = parser.parse_args()
    args.world_size = args.gpus * args.nodes
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")
    mp.spawn(worker, nprocs=args.gpus, args=(args,))
