import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from data import build_train_loader


class Trainer:
    def __init__(self, model, criterion, args):
        self.args = args
        self.criterion = criterion
        self.model = DDP(model.cuda(args.gpu), device_ids=[args.gpu])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=3e-4)

    def setup(self, dataset):
        self.train_loader, self.train_sampler = build_train_loader(dataset, self.args)

    def train_one_epoch(self):
        total = 0.0
        for (x_i, x_j), _ in self.train_loader:
            z_i, z_j = self.model(x_i.cuda(non_blocking=True), x_j.cuda(non_blocking=True))
            loss = self.criterion(z_i, z_j)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total / len(self.train_loader)

    def fit(self, epochs):
        for epoch in range(epochs):
            loss = self.train_one_epoch()
            if self.args.nr == 0:
                print(f"epoch {epoch}: {loss:.4f}")
