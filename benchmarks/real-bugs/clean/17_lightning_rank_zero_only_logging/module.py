import lightning.pytorch as pl
import torch
from lightning.pytorch.utilities import rank_zero_only


class Classifier(pl.LightningModule):
    def __init__(self, net, lr=1e-3):
        super().__init__()
        self.net = net
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("train/loss", loss, on_step=True, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        acc = (self.net(x).argmax(1) == y).float().mean()
        self.log("val/acc", acc, sync_dist=True)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            self.log("epoch_marker", float(self.current_epoch), rank_zero_only=True)
        self.dump_examples()

    @rank_zero_only
    def dump_examples(self):
        self.logger.experiment.add_text("status", f"finished epoch {self.current_epoch}", self.global_step)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
