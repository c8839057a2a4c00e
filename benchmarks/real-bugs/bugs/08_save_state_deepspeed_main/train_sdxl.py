import os

from accelerate import Accelerator
from accelerate.utils import DeepSpeedPlugin


def build_accelerator(args):
    plugin = DeepSpeedPlugin(zero_stage=2, gradient_accumulation_steps=args.gradient_accumulation_steps)
    return Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        deepspeed_plugin=plugin,
    )


def train(args, unet, optimizer, train_dataloader, lr_scheduler, compute_loss):
    accelerator = build_accelerator(args)
    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(unet, optimizer, train_dataloader, lr_scheduler)
    global_step = 0
    for epoch in range(args.num_train_epochs):
        for batch in train_dataloader:
            with accelerator.accumulate(unet):
                loss = compute_loss(unet, batch)
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if not accelerator.sync_gradients:
                continue
            global_step += 1
            if accelerator.is_main_process:
                if global_step % args.checkpointing_steps == 0:
                    save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    accelerator.save_state(save_path)
            if global_step >= args.max_train_steps:
                break
    accelerator.end_training()
