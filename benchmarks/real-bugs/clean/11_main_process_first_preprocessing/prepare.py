from accelerate import Accelerator
from datasets import load_dataset


def build_dataset(accelerator: Accelerator, tokenizer, name, max_len=512):
    raw = load_dataset(name, split="train")

    def tokenize(batch):
        return tokenizer(batch["text"], truncation=True, max_length=max_len)

    with accelerator.main_process_first():
        tokenized = raw.map(tokenize, batched=True, remove_columns=raw.column_names, desc="tokenizing")
    return tokenized
