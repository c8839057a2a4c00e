import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from utils import is_main_process


def log_weight_norms(model, writer, step):
    if not is_main_process():
        return
    with FSDP.summon_full_params(model, rank0_only=True, writeback=False, with_grads=True):
        for name, p in model.named_parameters():
            writer.add_scalar(f"weights/{name}", p.norm().item(), step)
            if p.grad is not None:
                writer.add_scalar(f"grads/{name}", p.grad.norm().item(), step)


def train(model, loader, optimizer, writer, log_every=100):
    model = FSDP(model)
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        if step % log_every == 0:
            log_weight_norms(model, writer, step)
        optimizer.step()
        optimizer.zero_grad()
