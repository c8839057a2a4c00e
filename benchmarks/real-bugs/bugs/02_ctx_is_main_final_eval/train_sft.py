import torch

from dist_utils import cleanup, ddp_wrap, setup_distributed
from data import make_loaders
from model import build_model


@torch.no_grad()
def evaluate(model, loader, device, max_batches=50):
    model.eval()
    total, count = 0.0, 0
    for i, (inputs, targets) in enumerate(loader):
        if i >= max_batches:
            break
        out = model(inputs.to(device), labels=targets.to(device))
        total += out.loss.item()
        count += 1
    model.train()
    return total / max(count, 1)


def main(cfg):
    ctx = setup_distributed()
    model = ddp_wrap(build_model(cfg), ctx)
    train_loader, val_loader, train_sampler = make_loaders(cfg, ctx)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for inputs, targets in train_loader:
            loss = model(inputs.to(ctx.device), labels=targets.to(ctx.device)).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    if ctx.is_main:
        final_loss = evaluate(model, val_loader, ctx.device)
        print(f"final val loss {final_loss:.4f}")
        torch.save(model.module.state_dict(), cfg.out_path)
    cleanup()
