import deepspeed
import torch.distributed as dist

from utils import save_zero_three_model


def train(args, model, ds_config, train_dataloader, to_device):
    model, optimizer, _, lr_scheduler = deepspeed.initialize(model=model, config=ds_config, dist_init_required=True)
    args.global_rank = dist.get_rank()
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            batch = to_device(batch, model.device)
            outputs = model(**batch, use_cache=False)
            model.backward(outputs.loss)
            model.step()
            if (step + 1) % args.save_steps == 0:
                if args.global_rank == 0:
                    save_zero_three_model(model, args.global_rank, args.output_dir, zero_stage=args.zero_stage)
