import json
import os

import torch
from torch.utils.data import IterableDataset, get_worker_info


class JsonlStream(IterableDataset):
    def __init__(self, path, tokenizer):
        self.path = path
        self.tokenizer = tokenizer
        self.rank = int(os.environ.get("RANK", 0))
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        with open(self.path) as f:
            for i, line in enumerate(f):
                if i % self.world_size != self.rank:
                    continue
                if (i // self.world_size) % nw != wid:
                    continue
                ids = self.tokenizer(json.loads(line)["text"])
                yield torch.tensor(ids[:512])
