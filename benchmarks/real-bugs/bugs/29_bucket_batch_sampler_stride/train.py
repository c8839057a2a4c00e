import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from samplers import DistributedBucketBatchSampler


def train(model, dataset, lengths, collate, local_rank, epochs):
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optim = torch.optim.Adam(model.parameters(), lr=1e-4)
    batch_sampler = DistributedBucketBatchSampler(lengths, batch_size=32)
    loader = DataLoader(dataset, batch_sampler=batch_sampler, collate_fn=collate, num_workers=4)
    for epoch in range(epochs):
        batch_sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(**{k: v.cuda(local_rank) for k, v in batch.items()}).loss
            loss.backward()
            optim.step()
            optim.zero_grad()
