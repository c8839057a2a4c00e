import json

import torch.distributed as dist


class LayerMonitor:
    def __init__(self, out_path, gather_fn=None):
        self.out_path = out_path
        self._gather_fn = gather_fn
        self.local = {}

    def record(self, layer_name, value):
        self.local.setdefault(layer_name, []).append(float(value))

    def gather_and_aggregate(self, step):
        if not self.local:
            return {}
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, self.local)
        merged = {}
        for part in gathered:
            for k, v in (part or {}).items():
                merged.setdefault(k, []).extend(v)
        result = {k: sum(v) / len(v) for k, v in merged.items()}
        if dist.get_rank() == 0:
            with open(self.out_path, "a") as f:
                f.write(json.dumps({"step": step, **result}) + "\n")
        self.local = {}
        return result
