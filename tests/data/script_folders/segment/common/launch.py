import torch
import torch.distributed as dist


def start(local_rank):
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
