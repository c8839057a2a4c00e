import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.tensorboard import SummaryWriter


def train(model, loader, sampler, optimizer, epochs, local_rank):
    rank = dist.get_rank()
    writer = SummaryWriter("runs/exp") if rank == 0 else None
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    step = 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 50 == 0:
                avg = loss.detach().clone()
                dist.all_reduce(avg)
                avg /= dist.get_world_size()
                if rank == 0:
                    print(f"step {step}: loss {avg.item():.4f}")
                    writer.add_scalar("train/loss", avg.item(), step)
    if writer is not None:
        writer.close()
