import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from transformers import AutoModelForCausalLM, AutoTokenizer


def grade(prompts, model_path="mistralai/Mistral-7B-Instruct-v0.2"):
    distributed_state = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.bfloat16)
    model.to(distributed_state.device)

    txt_out = []
    with distributed_state.split_between_processes(prompts) as shard:
        for prompt in shard:
            ids = tokenizer(prompt, return_tensors="pt").to(distributed_state.device)
            out = model.generate(**ids, max_new_tokens=64)
            txt_out.append(tokenizer.decode(out[0], skip_special_tokens=True))

    if distributed_state.is_main_process:
        print(gather_object(txt_out)[0])
        print(gather_object(txt_out)[1])
    distributed_state.wait_for_everyone()
