# SPDX-License-Identifier: MIT
"""loader.py: a torch Dataset whose __getitem__ keeps a buffer per item, read by a DataLoader with
2 forked workers; each worker checkpoints after its last item."""
import torch
from torch.utils.data import DataLoader, Dataset

import pyshape

kept = []


class Keeping(Dataset):
    def __len__(self):
        return 48

    def __getitem__(self, i):
        kept.append(bytes(200_000))  # HOLD
        if len(kept) == 24:  # this worker's last item: 12 batches of 4, 6 to each worker
            pyshape.checkpoint()
        return torch.tensor([i])


def main():
    torch.set_num_threads(1)
    loader = DataLoader(Keeping(), batch_size=4, num_workers=2, multiprocessing_context="fork")
    total = sum(int(b.sum()) for b in loader)
    assert total == sum(range(48)), total


if __name__ == "__main__":
    main()
