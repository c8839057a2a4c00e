import logging
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger(__name__)


class PhysicsTrainer:
    def __init__(self, model, loss_fn, lr=1e-3):
        self.raw_model = model
        self.loss_fn = loss_fn
        self.lr = lr

    def setup(self):
        dist.init_process_group("nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.model = DDP(self.raw_model.cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)

    def log_warning(self, msg, *args):
        log.warning(msg, *args)

    def train_epoch(self, epoch, loader):
        self.model.train()
        for inputs, target in loader:
            pred = self.model(inputs.cuda(non_blocking=True))
            loss = self.loss_fn(pred, target.cuda(non_blocking=True))
            if not torch.isfinite(loss):
                self.log_warning("Epoch %d: non-finite loss (%s); skipping this batch.", epoch + 1, float(loss.detach()))
                continue
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()

    def fit(self, loader, sampler, epochs):
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            self.train_epoch(epoch, loader)
