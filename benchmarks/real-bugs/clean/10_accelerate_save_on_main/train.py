import os

from accelerate import Accelerator


def train(model, optimizer, loader, args):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(args.epochs):
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            unwrapped = accelerator.unwrap_model(model)
            os.makedirs(args.output_dir, exist_ok=True)
            accelerator.save(unwrapped.state_dict(), os.path.join(args.output_dir, f"epoch{epoch}.bin"))
            accelerator.print(f"saved epoch {epoch}")
