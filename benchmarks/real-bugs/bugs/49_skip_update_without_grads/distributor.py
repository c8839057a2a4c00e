import torch
import torch.distributed as dist


class DDPDistributor:
    def __init__(self, params, group=None):
        self.params = list(params)
        self.group = group
        self.world_size = dist.get_world_size(group)

    def update_params(self, updates):
        local = [u.flatten() for u in updates]
        flat = torch.cat(local)
        out = torch.empty(flat.numel() * self.world_size, dtype=flat.dtype, device=flat.device)
        dist.all_gather_into_tensor(out, flat, group=self.group)
        return out


class Shampoo(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3):
        super().__init__(params, dict(lr=lr))
        self.distributor = DDPDistributor(self.param_groups[0]["params"])

    @torch.no_grad()
    def step(self, closure=None):
        grads = [p.grad for p in self.param_groups[0]["params"] if p.grad is not None]
        if not grads:
            return None
        updates = [-self.param_groups[0]["lr"] * g for g in grads]
        self.distributor.update_params(updates)
        return None
