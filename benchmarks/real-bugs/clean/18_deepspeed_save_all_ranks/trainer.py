import json
import os

import deepspeed
import torch.distributed as dist


class Trainer:
    def __init__(self, model, ds_config, output_dir):
        self.engine, self.optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
        self.rank = dist.get_rank()
        self.output_dir = output_dir

    def train_epoch(self, loader):
        for batch in loader:
            loss = self.engine(**batch).loss
            self.engine.backward(loss)
            self.engine.step()

    def save(self, epoch, metrics):
        self.engine.save_checkpoint(self.output_dir, tag=f"epoch{epoch}")
        if self.rank == 0:
            with open(os.path.join(self.output_dir, "metrics.json"), "a") as f:
                f.write(json.dumps({"epoch": epoch, **metrics}) + "\n")
