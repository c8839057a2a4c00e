import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from utils import save_on_master


def train(model, loader, sampler, optimizer, args):
    model = DDP(model.cuda(args.gpu), device_ids=[args.gpu])
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_on_master({"model": model.module.state_dict(), "epoch": epoch}, f"{args.output_dir}/checkpoint.pth")
