from .data import make_loader


def main(ds):
    loader, sampler = make_loader(ds)
    for epoch in range(3):
        for batch in loader:
            batch.sum().backward()
