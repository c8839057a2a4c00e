import os

import torch
import torch.distributed as dist
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def get_loader(data_files, batch_size):
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    ds = load_dataset("parquet", data_files=data_files, split="train", streaming=True)
    ds = split_dataset_by_node(ds, rank=rank, world_size=world_size)
    return DataLoader(ds.with_format("torch"), batch_size=batch_size, num_workers=4)


def train(model, criterion, data_files, epochs, batch_size=256):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_loader = get_loader(data_files, batch_size)
    for epoch in range(epochs):
        model.train()
        for batch_idx, data in enumerate(train_loader):
            X = data["X"].cuda(non_blocking=True)
            target = data["y"].reshape(-1, 28).cuda(non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(X), target)
            loss.backward()
            optimizer.step()
