import torch
import torch.distributed as dist


def evaluation(model, train_config, eval_dataloader, local_rank):
    model.eval()
    eval_loss = 0.0
    for batch in eval_dataloader:
        for key in batch.keys():
            batch[key] = batch[key].to(local_rank)
        with torch.no_grad():
            eval_loss += model(**batch).loss.detach().float()
    dist.all_reduce(eval_loss, op=dist.ReduceOp.SUM)
    return eval_loss / len(eval_dataloader) / dist.get_world_size()
