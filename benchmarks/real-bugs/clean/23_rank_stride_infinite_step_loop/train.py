import itertools

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def shard_stream(files, load):
    mine = files[dist.get_rank()::dist.get_world_size()]
    for path in itertools.cycle(mine):
        yield load(path)


def train(net, files, load, optimizer, total_steps, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    stream = shard_stream(files, load)
    for step in range(total_steps):
        x, y = next(stream)
        loss = torch.nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
