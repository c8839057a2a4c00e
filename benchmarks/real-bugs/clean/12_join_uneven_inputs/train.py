import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, all_files, load, optimizer):
    files = all_files[dist.get_rank()::dist.get_world_size()]
    model = DDP(net)
    with model.join():
        for path in files:
            loss = model(load(path)).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
