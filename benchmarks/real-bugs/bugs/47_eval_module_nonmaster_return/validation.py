import torch
import torch.distributed as dist


@torch.no_grad()
def validation_run(model, loader, loss_fn, device):
    if dist.is_initialized() and dist.get_rank() != 0:
        return None
    model.eval()
    total = 0.0
    for batch in loader:
        ypred = model(batch.X.to(device), batch.mask.to(device))
        total += loss_fn(ypred, batch.ytarget.to(device)).item()
    model.train()
    return total / max(len(loader), 1)
