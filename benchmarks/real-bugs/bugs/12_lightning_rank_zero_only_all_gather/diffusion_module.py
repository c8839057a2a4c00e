import lightning.pytorch as pl
import torch
from lightning.pytorch.utilities import rank_zero_only


class DDPMModule(pl.LightningModule):
    def __init__(self, net, sampler, eval_every=20, num_samples=16):
        super().__init__()
        self.net = net
        self.sampler = sampler
        self.eval_every = eval_every
        self.num_samples = num_samples

    def training_step(self, batch, batch_idx):
        loss = self.net.loss(batch)
        self.log("train/loss", loss, on_step=True)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val/loss", self.net.loss(batch), sync_dist=True)

    def on_validation_epoch_end(self):
        if (self.current_epoch + 1) % self.eval_every == 0:
            self.evaluate_sampling()

    @rank_zero_only
    def evaluate_sampling(self):
        samples = self.sampler.sample(self.net, self.num_samples, device=self.device)
        validity = self.net.score(samples)
        all_validity = self.all_gather(validity)
        self.logger.experiment.add_scalar("sampling/validity", all_validity.float().mean().item(), self.current_epoch)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)
