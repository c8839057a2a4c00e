import torch


@torch.no_grad()
def evaluate(accelerator, model, eval_loader, metric):
    model.eval()
    for batch in eval_loader:
        logits = model(**batch).logits
        preds, refs = accelerator.gather_for_metrics((logits.argmax(-1), batch["labels"]))
        metric.add_batch(predictions=preds, references=refs)
    result = metric.compute()
    if accelerator.is_main_process:
        accelerator.print(result)
    model.train()
    return result
