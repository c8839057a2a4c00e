import lightning as L
import torch


def train(fabric: L.Fabric, model, optimizer, train_loader, epochs, ckpt_dir):
    model, optimizer = fabric.setup(model, optimizer)
    train_loader = fabric.setup_dataloaders(train_loader)
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            loss = model(**batch).loss
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
        state = {"model": model, "optimizer": optimizer, "epoch": epoch}
        if fabric.global_rank == 0:
            fabric.save(f"{ckpt_dir}/epoch-{epoch}.ckpt", state)
        fabric.barrier()


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp")
    fabric.launch()
    model = torch.nn.Linear(16, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 16)), batch_size=8)
    train(fabric, model, optimizer, loader, 3, "checkpoints")
