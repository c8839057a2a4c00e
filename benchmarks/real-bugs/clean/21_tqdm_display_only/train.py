from accelerate import Accelerator
from tqdm.auto import tqdm


def train(model, optimizer, loader, evaluate, args):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    progress = tqdm(range(args.max_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        progress.update(1)
        completed_steps += 1
        if completed_steps % args.eval_steps == 0:
            evaluate(accelerator, model)
        if completed_steps >= args.max_steps:
            break
