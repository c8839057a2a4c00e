import itertools

import lightning.pytorch as pl
import torch
from sklearn.preprocessing import LabelEncoder


class ClusterModule(pl.LightningModule):
    def __init__(self, encoder, loss_func, lr=1e-4):
        super().__init__()
        self.encoder = encoder
        self.loss_func = loss_func
        self.lr = lr
        self.validation_step_outputs = []
        self.validation_step_clusters = []

    def training_step(self, batch, batch_idx):
        tokens, clusters = batch
        loss = self.loss_func(self.encoder(tokens), torch.as_tensor(LabelEncoder().fit_transform(clusters)))
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        tokens, clusters = batch
        self.validation_step_outputs.append(self.encoder(tokens))
        self.validation_step_clusters.append(clusters)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            all_preds = torch.cat(self.validation_step_outputs, dim=0)
            labels = LabelEncoder().fit_transform(list(itertools.chain.from_iterable(self.validation_step_clusters)))
            loss = self.loss_func(all_preds, torch.tensor(labels, device=all_preds.device))
            self.log("val_loss", loss, sync_dist=True)
        self.validation_step_outputs.clear()
        self.validation_step_clusters.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
