import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from data import JsonlStream


def main(net, tokenizer, path, local_rank, epochs):
    dist.init_process_group("nccl")
    model = DDP(net.to(local_rank), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loader = DataLoader(JsonlStream(path, tokenizer), batch_size=8, num_workers=2)
    for epoch in range(epochs):
        for x in loader:
            loss = model(x.to(local_rank)).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
