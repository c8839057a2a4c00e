import os

import deepspeed
import torch.distributed as dist


class DeepSpeedTrainer:
    def __init__(self, model, train_set, ds_config, output_dir):
        self.engine, self.optimizer, self.train_loader, _ = deepspeed.initialize(
            model=model,
            model_parameters=[p for p in model.parameters() if p.requires_grad],
            training_data=train_set,
            config=ds_config,
        )
        self.global_rank = dist.get_rank()
        self.output_dir = output_dir
        self.step = 0

    def train_epoch(self):
        self.engine.train()
        for batch in self.train_loader:
            batch = {k: v.to(self.engine.device) for k, v in batch.items()}
            loss = self.engine(**batch).loss
            self.engine.backward(loss)
            self.engine.step()
            self.step += 1

    def save(self, tag):
        if self.global_rank == 0:
            os.makedirs(self.output_dir, exist_ok=True)
            self.engine.save_checkpoint(self.output_dir, tag=tag)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
            self.save(tag=f"epoch{epoch}")
