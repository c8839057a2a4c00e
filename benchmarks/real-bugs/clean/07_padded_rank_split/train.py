import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from data import make_loader


def train(net, dataset, local_rank, epochs):
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = make_loader(dataset, 64)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            opt.zero_grad()
            loss.backward()
            opt.step()
