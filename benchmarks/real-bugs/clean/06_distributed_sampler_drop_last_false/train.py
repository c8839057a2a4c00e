import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main(model, dataset, epochs, local_rank):
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=False)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
