import torch
import torch.distributed as dist


class CurriculumTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def _get_model(self):
        return self.model.module if hasattr(self.model, "module") else self.model

    def _train_stage(self, loader, epochs):
        for epoch in range(epochs):
            for batch in loader:
                self.optimizer.zero_grad()
                loss = self._get_model().compute_loss(batch)
                loss.backward()
                if dist.is_initialized():
                    for p in self._get_model().parameters():
                        if p.grad is not None:
                            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
                torch.nn.utils.clip_grad_norm_(self._get_model().parameters(), 1.0)
                self.optimizer.step()
