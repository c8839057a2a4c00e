import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


@torch.no_grad()
def evaluate(net, loader, device):
    net.eval()
    correct = total = 0
    for x, y in loader:
        correct += (net(x.to(device)).argmax(1) == y.to(device)).sum().item()
        total += y.numel()
    net.train()
    return correct / total


def train(net, loader, sampler, val_loader, epochs, local_rank):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: acc {evaluate(model.module, val_loader, local_rank):.3f}")
        dist.barrier()
