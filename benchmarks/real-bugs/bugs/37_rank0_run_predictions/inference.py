import torch


@torch.no_grad()
def run_predictions(world_size, rank, model, loader, outdir, sample):
    model.eval()
    for i, batch in enumerate(loader):
        ypred = model(batch.X.to(rank), batch.mask.to(rank))
        torch.save({"pred": ypred.cpu(), "target": batch.ytarget}, f"{outdir}/pred_{rank}_{i}.pt")
    model.train()
