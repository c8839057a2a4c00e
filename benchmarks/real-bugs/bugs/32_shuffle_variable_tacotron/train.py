import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def prepare_dataloaders(hparams, trainset, collate_fn):
    if hparams.distributed_run:
        train_sampler = DistributedSampler(trainset)
    else:
        train_sampler = None
    shuffle = True
    train_loader = DataLoader(
        trainset,
        num_workers=1,
        shuffle=shuffle,
        sampler=train_sampler,
        batch_size=hparams.batch_size,
        pin_memory=False,
        drop_last=True,
        collate_fn=collate_fn,
    )
    return train_loader, train_sampler


def train(model, hparams, trainset, collate_fn, criterion):
    train_loader, train_sampler = prepare_dataloaders(hparams, trainset, collate_fn)
    optimizer = torch.optim.Adam(model.parameters(), lr=hparams.learning_rate)
    for epoch in range(hparams.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for batch in train_loader:
            x, y = model.parse_batch(batch)
            loss = criterion(model(x), y)
            model.zero_grad()
            loss.backward()
            optimizer.step()
