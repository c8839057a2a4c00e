import os

import torch
import torch.distributed as dist


class Checkpointer:
    def __init__(self, directory, recoverables):
        self.directory = directory
        self.recoverables = recoverables

    def save_and_keep_only(self, meta, num_to_keep=1):
        path = os.path.join(self.directory, f"CKPT+{meta['epoch']}")
        os.makedirs(path, exist_ok=True)
        for name, obj in self.recoverables.items():
            torch.save(obj.state_dict(), os.path.join(path, f"{name}.ckpt"))
        if dist.is_initialized():
            dist.barrier()
