import os
import urllib.request

import torch.distributed as dist


def prepare_data(url, root):
    target = os.path.join(root, os.path.basename(url))
    if dist.get_rank() == 0 and not os.path.exists(target):
        os.makedirs(root, exist_ok=True)
        urllib.request.urlretrieve(url, target)
    dist.barrier()
    return target
