import os

from accelerate import Accelerator


def save_final(accelerator: Accelerator, model, tokenizer, output_dir):
    if accelerator.is_main_process:
        os.makedirs(output_dir, exist_ok=True)
        unwrapped_model = accelerator.unwrap_model(model)
        unwrapped_model.save_pretrained(output_dir, safe_serialization=True)
        tokenizer.save_pretrained(output_dir)
    else:
        accelerator.wait_for_everyone()


def train(accelerator, model, optimizer, loader, tokenizer, args):
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(args.epochs):
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
    save_final(accelerator, model, tokenizer, args.output_dir)
