import json

import torch
import torch.distributed as dist


def reduce_and_write(stats, step, path):
    keys = sorted(stats)
    t = torch.tensor([stats[k] for k in keys], device="cuda")
    dist.all_reduce(t)
    t /= dist.get_world_size()
    if dist.get_rank() != 0:
        return None
    result = dict(zip(keys, t.tolist()))
    with open(path, "a") as f:
        f.write(json.dumps({"step": step, **result}) + "\n")
    return result
