import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


class FSDPTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.model = None
        self.optimizer = None

    def setup(self, model):
        dist.init_process_group("nccl")
        self.rank = dist.get_rank()
        torch.cuda.set_device(self.cfg.local_rank)
        self.model = FSDP(model, device_id=torch.cuda.current_device())
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.cfg.lr)

    def train_step(self, batch):
        loss = self.model(**batch).loss
        loss.backward()
        self.model.clip_grad_norm_(1.0)
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()

    def save(self, path):
        if self.rank == 0:
            cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
            with FSDP.state_dict_type(self.model, StateDictType.FULL_STATE_DICT, cfg):
                model_state = self.model.state_dict()
            optim_state = FSDP.full_optim_state_dict(self.model, self.optimizer)
            torch.save({"model": model_state, "optim": optim_state}, path)

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for batch in loader:
                self.train_step(batch)
            self.save(f"{self.cfg.out_dir}/epoch{epoch}.pt")
