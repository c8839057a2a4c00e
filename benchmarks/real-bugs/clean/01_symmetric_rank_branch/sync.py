import torch
import torch.distributed as dist


def broadcast_config(cfg_dict, device):
    rank = dist.get_rank()
    if rank == 0:
        payload = [cfg_dict]
        dist.broadcast_object_list(payload, src=0)
    else:
        payload = [None]
        dist.broadcast_object_list(payload, src=0)
    return payload[0]


def share_seed(device):
    if dist.get_rank() == 0:
        seed = torch.randint(0, 2**31 - 1, (1,), device=device)
    else:
        seed = torch.zeros(1, dtype=torch.long, device=device)
    dist.broadcast(seed, src=0)
    return int(seed.item())
