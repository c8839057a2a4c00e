import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def save_model_checkpoint(model, optimizer, rank, path):
    optim_state = FSDP.full_optim_state_dict(model, optimizer)
    if rank == 0:
        torch.save({"optim": optim_state}, path)
