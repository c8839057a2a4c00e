import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from validation import validation_run


def train(net, train_loader, train_sampler, val_loader, loss_fn, epochs, local_rank):
    device = torch.device("cuda", local_rank)
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        for batch in train_loader:
            loss = loss_fn(model(batch.X.to(device), batch.mask.to(device)), batch.ytarget.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = validation_run(model, val_loader, loss_fn, device)
        if val_loss is not None:
            print(f"epoch {epoch}: val {val_loss:.4f}")
        dist.barrier()
