import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, loader, optimizer, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
        bad = torch.tensor([int(not torch.isfinite(loss).item())], device=loss.device)
        dist.all_reduce(bad, op=dist.ReduceOp.MAX)
        if bad.item():
            optimizer.zero_grad(set_to_none=True)
            continue
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
