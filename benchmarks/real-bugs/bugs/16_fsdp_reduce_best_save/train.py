import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from checkpoint import save_model_checkpoint


def validation(model, rank, val_loader):
    model.eval()
    loss = torch.zeros(2, device=rank)
    with torch.no_grad():
        for batch in val_loader:
            out = model(**batch)
            loss[0] += out.loss.item()
            loss[1] += 1
    dist.reduce(loss, 0, op=dist.ReduceOp.SUM)
    return loss[0] / loss[1]


def fsdp_main(rank, world_size, model, train_loader, val_loader, optimizer, epochs):
    model = FSDP(model, device_id=rank)
    best_val_loss = float("inf")
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        curr_val_loss = validation(model, rank, val_loader)
        if curr_val_loss < best_val_loss:
            best_val_loss = curr_val_loss
            save_model_checkpoint(model, optimizer, rank, f"ckpt-{epoch}.pt")
