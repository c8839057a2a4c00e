import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, loader, sampler, optimizer, max_steps, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    global_step = 0
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            global_step += 1
            if global_step >= max_steps:
                return global_step
        epoch += 1
