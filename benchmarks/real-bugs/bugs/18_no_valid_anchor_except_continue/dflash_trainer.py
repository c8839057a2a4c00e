import torch
from torch.nn.parallel import DistributedDataParallel as DDP


class NoValidAnchorsError(RuntimeError):
    pass


def compute_block_loss(draft_model, batch, block_size):
    lengths = batch["attention_mask"].sum(dim=1)
    valid = lengths > block_size
    if not valid.any():
        raise NoValidAnchorsError("no sample in this micro-batch is long enough for a block")
    logits = draft_model(batch["input_ids"][valid], attention_mask=batch["attention_mask"][valid])
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"][valid].flatten())


def train(draft_model, loader, optimizer, scheduler, block_size, local_rank):
    model = DDP(draft_model.cuda(local_rank), device_ids=[local_rank])
    model.train()
    for step, batch in enumerate(loader):
        batch = {k: v.cuda(local_rank) for k, v in batch.items()}
        try:
            loss = compute_block_loss(model, batch, block_size)
        except NoValidAnchorsError:
            continue
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
