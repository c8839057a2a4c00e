import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from train_utils import evaluation


def main(train_config, model, train_dataloader, eval_dataloader):
    dist.init_process_group("nccl")
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    model = FSDP(model, device_id=torch.cuda.current_device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=train_config.lr)
    for epoch in range(train_config.num_epochs):
        model.train()
        for batch in train_dataloader:
            batch = {k: v.to("cuda") for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        eval_ppl = evaluation(model, train_config, eval_dataloader, rank)
        if rank == 0:
            print(f"epoch {epoch}: eval {eval_ppl}")
