import torch
import torch.nn as nn
from accelerate import Accelerator


class ImageTrainer:
    def __init__(self, model, optimizer, train_loader, test_loader, epochs, grad_accum=2):
        self.accelerator = Accelerator(gradient_accumulation_steps=grad_accum)
        self.model, self.optimizer, self.train_loader, self.test_loader = self.accelerator.prepare(
            model, optimizer, train_loader, test_loader
        )
        self.loss_fn = nn.CrossEntropyLoss()
        self.epochs = epochs

    def train_epoch(self):
        self.model.train()
        for images, targets in self.train_loader:
            with self.accelerator.accumulate(self.model):
                loss = self.loss_fn(self.model(images), targets)
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        correct = 0
        seen = 0
        for images, targets in self.test_loader:
            preds = self.model(images).argmax(dim=-1)
            preds, targets = self.accelerator.gather_for_metrics((preds, targets))
            correct += (preds == targets).sum().item()
            seen += targets.numel()
        return correct / seen

    def fit(self):
        for epoch in range(self.epochs):
            self.train_epoch()
            if self.accelerator.is_main_process:
                acc = self.evaluate()
                self.accelerator.print(f"epoch {epoch}: test acc {acc:.4f}")
