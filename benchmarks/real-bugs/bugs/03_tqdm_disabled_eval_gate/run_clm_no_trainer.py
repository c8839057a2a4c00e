import math

import torch
from accelerate import Accelerator
from tqdm.auto import tqdm


def evaluate(model, eval_dataloader, accelerator, per_device_batch_size):
    model.eval()
    losses = []
    for batch in eval_dataloader:
        with torch.no_grad():
            outputs = model(**batch)
        losses.append(accelerator.gather_for_metrics(outputs.loss.repeat(per_device_batch_size)))
    model.train()
    eval_loss = torch.mean(torch.cat(losses))
    try:
        return math.exp(eval_loss)
    except OverflowError:
        return float("inf")


def train(args, model, optimizer, lr_scheduler, train_dataloader, eval_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )
    total_steps = args.num_train_epochs * math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    progress_bar = tqdm(range(total_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                accelerator.backward(outputs.loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                progress_bar.update(1)
                if progress_bar.n % args.eval_steps == 0:
                    perplexity = evaluate(model, eval_dataloader, accelerator, args.per_device_eval_batch_size)
                    accelerator.print(f"step {progress_bar.n}: perplexity {perplexity:.2f}")
    accelerator.wait_for_everyone()
    return model
