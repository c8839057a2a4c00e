import os

import deepspeed
import torch


def save_zero_three_model(model_ema, global_rank, save_dir, zero_stage=0):
    zero_stage_3 = zero_stage == 3
    os.makedirs(save_dir, exist_ok=True)
    model_to_save = model_ema.module if hasattr(model_ema, "module") else model_ema
    output_state_dict = {}
    for k, v in model_to_save.named_parameters():
        with deepspeed.zero.GatheredParameters([v], enabled=zero_stage_3):
            v_p = v.data.cpu()
        if global_rank == 0:
            output_state_dict[k] = v_p
    if global_rank == 0:
        torch.save(output_state_dict, os.path.join(save_dir, "pytorch_model.bin"))
