import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler


def load_and_cache_examples(args, tokenizer, build_features):
    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()
    dataset = build_features(args.data_dir, tokenizer, cache=True)
    if args.local_rank == 0:
        torch.distributed.barrier()
    return dataset


def train(args, model, tokenizer, build_features):
    dataset = load_and_cache_examples(args, tokenizer, build_features)
    sampler = RandomSampler(dataset) if args.local_rank == -1 else DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler, batch_size=args.train_batch_size)
    if args.local_rank != -1:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    for epoch in range(int(args.num_train_epochs)):
        if args.local_rank != -1:
            sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(**batch)[0]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
