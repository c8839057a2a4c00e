import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class EpochCounterWithStopper:
    def __init__(self, limit, patience, min_delta=0.0):
        self.limit = limit
        self.patience = patience
        self.min_delta = min_delta
        self.current = 0
        self.best = float("inf")
        self.bad_epochs = 0
        self.should_stop = False

    def update_metric(self, value):
        if value < self.best - self.min_delta:
            self.best = value
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        self.should_stop = self.bad_epochs >= self.patience


class Brain:
    def __init__(self, modules, opt_class, epoch_counter, rank):
        self.modules = DDP(modules, device_ids=[torch.cuda.current_device()])
        self.optimizer = opt_class(self.modules.parameters())
        self.epoch_counter = epoch_counter
        self.rank = rank

    def fit_batch(self, batch):
        loss = self.modules(batch).mean()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()

    def on_stage_end(self, valid_loss):
        self.epoch_counter.update_metric(valid_loss)

    def fit(self, train_set, valid_fn):
        for epoch in range(self.epoch_counter.limit):
            for batch in train_set:
                self.fit_batch(batch)
            if self.rank == 0:
                self.on_stage_end(valid_fn(self.modules.module))
            if self.epoch_counter.should_stop:
                break
        dist.barrier()
