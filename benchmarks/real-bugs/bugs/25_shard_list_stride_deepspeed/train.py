import deepspeed
from torch.utils.data import DataLoader

from dataset import ShardDataset


def train(args, model, shard_list, read_shard, collate):
    engine, optimizer, _, scheduler = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    train_set = ShardDataset(shard_list, read_shard)
    loader = DataLoader(train_set, batch_size=None, num_workers=4, collate_fn=collate)
    for epoch in range(args.max_epoch):
        for batch in loader:
            loss = engine(**batch)["loss"]
            engine.backward(loss)
            engine.step()
