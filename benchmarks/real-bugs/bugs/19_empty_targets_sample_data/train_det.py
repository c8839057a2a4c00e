import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def sample_data(loader):
    while True:
        for batch in loader:
            yield batch


def train_detector(detector, loader, optimizer, max_iter, local_rank):
    model = DDP(detector.cuda(local_rank), device_ids=[local_rank], find_unused_parameters=True)
    loader_iter = sample_data(loader)
    for it in range(max_iter):
        images, targets = next(loader_iter)
        images = images.cuda(local_rank, non_blocking=True)
        num_boxes = sum(t["boxes"].shape[0] for t in targets)
        if num_boxes == 0:
            continue
        targets = [{k: v.cuda(local_rank) for k, v in t.items()} for t in targets]
        losses = model(images, targets)
        loss = sum(losses.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
