import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from stream import RankStridedStream


def train(model, source, local_rank, steps_per_log=50):
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    loader = DataLoader(RankStridedStream(source), batch_size=16)
    for step, batch in enumerate(loader):
        out = model(**{k: v.cuda(local_rank) for k, v in batch.items()})
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % steps_per_log == 0:
            print(step, out.loss.item())
