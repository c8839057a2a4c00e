import torch
import torch.distributed as dist


class DistributedCheckpointer:
    def __init__(self, path):
        self.path = path

    def save_checkpoint(self, model, optimizer, epoch):
        if dist.get_rank() == 0:
            torch.save({"model": model.module.state_dict(), "optim": optimizer.state_dict()}, self.path / f"{epoch}.pt")
        dist.barrier()


class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader, checkpointer):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.checkpointer = checkpointer

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        losses = [self.model(**b).loss.item() for b in self.val_loader]
        self.model.train()
        return sum(losses) / max(len(losses), 1)

    def _should_save_checkpoint(self, val_loss, best_val_loss):
        return val_loss < best_val_loss

    def run(self, epochs):
        best_val_loss = float("inf")
        for epoch in range(epochs):
            for batch in self.train_loader:
                self.model(**batch).loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
            val_loss = self.validate()
            if self._should_save_checkpoint(val_loss, best_val_loss):
                best_val_loss = val_loss
                self.checkpointer.save_checkpoint(self.model, self.optimizer, epoch)
