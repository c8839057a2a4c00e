import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset


def build_loader(dataset, batch_size):
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    indices = np.random.RandomState(0).permutation(len(dataset))
    shard = np.array_split(indices, world_size)[rank]
    return DataLoader(Subset(dataset, shard.tolist()), batch_size=batch_size, shuffle=True, drop_last=False)


def main(model, dataset, epochs, batch_size=512):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", rank % torch.cuda.device_count())
    model = DDP(model.to(device), device_ids=[device.index])
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.01)
    loader = build_loader(dataset, batch_size)
    for epoch in range(epochs):
        for users, items, labels in loader:
            logits = model(users.to(device), items.to(device))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels.float().to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
