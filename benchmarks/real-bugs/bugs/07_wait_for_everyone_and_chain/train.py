import os

import torch
from accelerate import Accelerator


def main(args, dit, optimizer, train_dataloader, lr_scheduler, logger):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, project_dir=args.project_dir)
    dit, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(dit, optimizer, train_dataloader, lr_scheduler)
    global_step = 0
    for epoch in range(args.num_train_epochs):
        for batch in train_dataloader:
            with accelerator.accumulate(dit):
                loss = dit(**batch).loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(dit.parameters(), args.max_grad_norm)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
            if accelerator.sync_gradients and accelerator.is_main_process and global_step % args.checkpointing_steps == 0:
                logger.info(f"saving checkpoint in {global_step=}")
                save_path = os.path.join(args.project_dir, f"checkpoint-{global_step}")
                os.makedirs(save_path, exist_ok=True)
                accelerator.wait_for_everyone()
                unwrapped = accelerator.unwrap_model(dit)
                state = unwrapped.state_dict()
                trainable = [k for k, v in unwrapped.named_parameters() if v.requires_grad]
                torch.save({k: state[k] for k in trainable}, os.path.join(save_path, "dit_lora.pt"))
            if global_step >= args.max_train_steps:
                break
