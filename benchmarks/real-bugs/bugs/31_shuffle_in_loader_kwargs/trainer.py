import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class BaseTrainer:
    def __init__(self, model, train_dataset, config):
        self.config = config
        self.distributed = config.world_size > 1
        if self.distributed:
            dist.init_process_group("nccl", rank=config.rank, world_size=config.world_size)
            model = DDP(model.cuda(config.local_rank), device_ids=[config.local_rank])
        self.model = model
        self.train_loader = self.get_train_dataloader(train_dataset)

    def get_train_dataloader(self, dataset):
        loader_kwargs = dict(batch_size=self.config.batch_size, num_workers=self.config.workers, shuffle=True)
        if self.distributed:
            sampler = DistributedSampler(dataset, num_replicas=self.config.world_size, rank=self.config.rank)
        else:
            sampler = None
        return DataLoader(dataset, sampler=sampler, **loader_kwargs)

    def train(self, optimizer, epochs):
        for epoch in range(epochs):
            if self.distributed:
                self.train_loader.sampler.set_epoch(epoch)
            for batch in self.train_loader:
                loss = self.model(batch).loss
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
