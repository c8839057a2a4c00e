import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class EarlyStopping:
    def __init__(self, patience=3, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best = None
        self.counter = 0
        self.early_stop = False

    def __call__(self, val_loss):
        if self.best is None or val_loss < self.best - self.min_delta:
            self.best = val_loss
            self.counter = 0
        else:
            self.counter += 1
            self.early_stop = self.counter >= self.patience


def evaluate(model, loader, criterion, rank):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for src, tgt in loader:
            total += criterion(model(src.to(rank)), tgt.to(rank)).item()
    return total / len(loader)


def train(rank, world_size, net, train_loader, val_loader, train_sampler, criterion, epochs):
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    early_stopping = EarlyStopping(patience=5)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for src, tgt in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(src.to(rank)), tgt.to(rank))
            loss.backward()
            optimizer.step()
        val_loss = evaluate(model, val_loader, criterion, rank)
        if rank == 0:
            torch.save(model.module.state_dict(), f"translation_model_epoch_{epoch + 1}.pth")
        early_stopping(val_loss)
        if early_stopping.early_stop:
            print("Early stopping")
            break
    dist.destroy_process_group()
