import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from inference import run_predictions


def train_mlpf(rank, world_size, model, optimizer, train_loader, test_loaders, outdir, num_epochs, test_every):
    if world_size > 1:
        model = DistributedDataParallel(model, device_ids=[rank])
    for epoch in range(num_epochs):
        model.train()
        for batch in train_loader:
            loss = model(batch.X.to(rank), batch.mask.to(rank)).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if (epoch + 1) % test_every == 0:
            if (rank == 0) or (rank == "cpu"):
                for sample, loader in test_loaders.items():
                    run_predictions(world_size, rank, model, loader, outdir, sample)
        if world_size > 1:
            dist.barrier()
