from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, steps, epochs, data_loader, model, criterion, optimizer, config):
        self.steps = steps
        self.epochs = epochs
        self.data_loader = data_loader
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.config = config
        self.finish_train = False

    def run(self):
        while True:
            self._train_epoch()
            if self.finish_train:
                break

    def _train_epoch(self):
        for batch in self.data_loader["train"]:
            x, y = batch
            loss = self.criterion(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.steps += 1
            if self.steps >= self.config["train_max_steps"]:
                self.finish_train = True
                return
        self.epochs += 1


def main(config, train_dataset, dev_dataset, collate, model, criterion, optimizer):
    sampler = {"train": None, "dev": None}
    if config["distributed"]:
        sampler["train"] = DistributedSampler(dataset=train_dataset, num_replicas=config["world_size"], rank=config["rank"], shuffle=True)
        sampler["dev"] = DistributedSampler(dataset=dev_dataset, num_replicas=config["world_size"], rank=config["rank"], shuffle=False)
    data_loader = {
        "train": DataLoader(train_dataset, shuffle=not config["distributed"], collate_fn=collate, batch_size=config["batch_size"], sampler=sampler["train"]),
        "dev": DataLoader(dev_dataset, shuffle=False, collate_fn=collate, batch_size=config["batch_size"], sampler=sampler["dev"]),
    }
    trainer = Trainer(0, 0, data_loader, model, criterion, optimizer, config)
    trainer.run()
