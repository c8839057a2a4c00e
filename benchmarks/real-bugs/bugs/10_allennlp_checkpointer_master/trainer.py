import deepspeed
import torch.distributed as dist

from checkpointer import DeepspeedCheckpointer


class DeepspeedTrainer:
    def __init__(self, model, data_loader, ds_config, serialization_dir, num_epochs):
        self.model_engine, self.optimizer, _, _ = deepspeed.initialize(
            model=model, model_parameters=model.parameters(), config=ds_config
        )
        self.data_loader = data_loader
        self._rank = dist.get_rank()
        self._master = self._rank == 0
        self._checkpointer = DeepspeedCheckpointer(serialization_dir)
        self._num_epochs = num_epochs

    def _train_epoch(self, epoch):
        total = 0.0
        for batch in self.data_loader:
            loss = self.model_engine(**batch)["loss"]
            self.model_engine.backward(loss)
            self.model_engine.step()
            total += loss.item()
        return total

    def train(self):
        for epoch in range(self._num_epochs):
            train_loss = self._train_epoch(epoch)
            if self._master and self._checkpointer is not None:
                self._checkpointer.save_checkpoint(epoch, self)
            if self._master:
                print(f"epoch {epoch}: loss {train_loss:.4f}")
