import torch
from accelerate import Accelerator


@torch.no_grad()
def evaluate(accelerator: Accelerator, model, eval_loader):
    model.eval()
    losses = []
    for batch in eval_loader:
        loss = model(**batch).loss.detach()
        if accelerator.num_processes > 1:
            loss = accelerator.gather(loss[None]).mean()
        losses.append(loss)
    model.train()
    mean_loss = torch.stack(losses).mean().item()
    if accelerator.is_main_process:
        accelerator.print(f"eval loss {mean_loss:.4f}")
    return mean_loss
