import torch


def train_one_epoch(model, loader, optimizer, epoch, device):
    if hasattr(loader.sampler, "set_epoch"):
        loader.sampler.set_epoch(epoch)
    model.train()
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
