import torch
import torch.distributed as dist


def collect_predictions(local_preds, device):
    rank = dist.get_rank()
    world = dist.get_world_size()
    size = torch.tensor([local_preds.numel()], device=device)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size)
    max_size = int(max(s.item() for s in sizes))
    padded = torch.zeros(max_size, device=device, dtype=local_preds.dtype)
    padded[: local_preds.numel()] = local_preds
    gather_list = [torch.zeros_like(padded) for _ in range(world)] if rank == 0 else None
    dist.gather(padded, gather_list, dst=0)
    if rank == 0:
        return torch.cat([g[: int(s.item())] for g, s in zip(gather_list, sizes)])
    return None
