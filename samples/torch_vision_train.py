# SPDX-License-Identifier: MIT
"""torch_vision_train.py: a real PyTorch vision training loop to try mg on.

A small CNN (or torchvision's resnet18, --model resnet18) learns torchvision's FakeData images with AdamW
and CrossEntropy, on the CPU by default and on CUDA when available. Under the probe
(`mgprobe run -- /usr/bin/python3 samples/torch_vision_train.py`) every step is marked through
`ctypes.CDLL(None).mgprobe_step`; without the probe the markers are no-ops and nothing changes.

--leak reproduces the user's situation (docs in ../../shared/seeds): a collate function keeps native
memory alive outside Python's view -- a libc malloc() buffer per batch, called through ctypes and
libffi, kept in a module-level list -- so Python's tensor count stays flat while RSS climbs.
With --workers N the collate function (and so the leak) runs in the N forked DataLoader workers.
--leak-history is the classic PyTorch leak: the training loop keeps each step's loss on the updated
model as a tensor (`history.append(loss_fn(model(images), labels))`, no `.item()`), and with it the
autograd graph behind it, activations included.
--leak-device keeps each step's input batch on the device (a CUDA tensor kept in a list: GPU memory
grows through PyTorch's caching allocator, host memory does not).
--leak-getitem keeps --leak-bytes of Python bytes per sample in the Dataset's __getitem__ (with
--workers N: in the workers, where __getitem__ runs).

Every 10 steps it prints `step N loss L rss MB tensors T`, like the seeds' logs, and at the end one
`done: ...` line with the mean step time. Same --seed, same losses, probe or not.
"""
import argparse
import ctypes
import gc
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.dataloader import default_collate
import torchvision
from torchvision import transforms

_libc = ctypes.CDLL(None, use_errno=True)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]
_libc.memset.restype = ctypes.c_void_p
_libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

# The leak: native buffers nobody frees, invisible to gc and to torch (module level, as in the seeds'
# "C++ code in the collator").
LEAKED = []
LEAK_BYTES = 0  # per batch, set from --leak-bytes when --leak is given


def leaky_collate(batch):
    """default_collate plus LEAK_BYTES of malloc'd (and touched, so resident) memory kept forever."""
    out = default_collate(batch)
    if LEAK_BYTES:
        p = _libc.malloc(LEAK_BYTES)
        if p:
            _libc.memset(p, 0x5A, LEAK_BYTES)
            LEAKED.append(p)
    return out


class KeepingDataset(torch.utils.data.Dataset):
    """A dataset whose __getitem__ keeps a bytes object per sample it serves (a cache never read)."""

    def __init__(self, inner, keep_bytes):
        self.inner = inner
        self.keep_bytes = keep_bytes
        self.kept = []

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, i):
        self.kept.append(bytes(self.keep_bytes))
        return self.inner[i]


def step_marker():
    """mgprobe_step(n) when the probe is preloaded, else a no-op."""
    try:
        active = _libc.mgprobe_active
        fn = _libc.mgprobe_step
    except AttributeError:
        return lambda n: None
    active.restype = ctypes.c_int
    if not active():
        return lambda n: None
    fn.restype = None
    fn.argtypes = [ctypes.c_uint64]
    return fn


class SmallCNN(nn.Module):
    """Three conv blocks and a linear head: ~25k parameters, fast on two CPU cores."""

    def __init__(self, classes):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.b2 = nn.BatchNorm2d(32)
        self.c3 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.max_pool2d(F.relu(self.b2(self.c2(x))), 2)
        x = F.relu(self.c3(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


def make_model(name, classes):
    if name == "cnn":
        return SmallCNN(classes)
    # torchvision's resnet18 (11M parameters): the real architecture, slower on a CPU.
    return torchvision.models.resnet18(num_classes=classes)


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def tensor_count():
    # type(), not isinstance(): some objects warn when their __class__ is looked up.
    return sum(1 for o in gc.get_objects() if issubclass(type(o), torch.Tensor))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--image", type=int, default=32, help="image side in pixels")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--model", choices=["cnn", "resnet18"], default="cnn")
    ap.add_argument("--workers", type=int, default=0, help="DataLoader worker processes (fork)")
    ap.add_argument("--leak", action="store_true", help="leak native memory in the collate function")
    ap.add_argument("--leak-bytes", type=int, default=1 << 20, help="bytes leaked per batch")
    ap.add_argument("--leak-history", action="store_true", help="keep every step's loss tensor")
    ap.add_argument("--leak-device", action="store_true", help="keep every step's batch on the device")
    ap.add_argument("--leak-getitem", action="store_true",
                    help="keep --leak-bytes / --batch bytes per sample in Dataset.__getitem__")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    ap.add_argument("--print-every", type=int, default=10)
    args = ap.parse_args()

    global LEAK_BYTES
    LEAK_BYTES = args.leak_bytes if args.leak else 0
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(args.seed)

    data = torchvision.datasets.FakeData(
        size=args.steps * args.batch, image_size=(3, args.image, args.image),
        num_classes=args.classes, transform=transforms.ToTensor(), random_offset=args.seed)
    if args.leak_getitem:
        data = KeepingDataset(data, max(args.leak_bytes // args.batch, 1))
    gen = torch.Generator()
    gen.manual_seed(args.seed)
    loader = DataLoader(
        data, batch_size=args.batch, shuffle=True, generator=gen, num_workers=args.workers,
        collate_fn=leaky_collate, drop_last=True,
        multiprocessing_context="fork" if args.workers > 0 else None)

    model = make_model(args.model, args.classes).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    mark = step_marker()

    print(f"torch {torch.__version__} device {device} model {args.model} batch {args.batch} "
          f"image {args.image} workers {args.workers} threads {torch.get_num_threads()} "
          f"leak {LEAK_BYTES} bytes/step", flush=True)
    if LEAK_BYTES:
        where = "main process" if args.workers == 0 else f"each of {args.workers} workers"
        print(f"leak: {LEAK_BYTES} bytes per step ({LEAK_BYTES / 2**20:.2f} MiB) kept by "
              f"leaky_collate in the {where}", flush=True)

    model.train()
    t0 = time.perf_counter()
    t_warm = None
    warm = min(10, args.steps // 2)
    step = 0
    loss_v = float("nan")
    history = []
    kept_on_device = []
    for images, labels in loader:
        if step >= args.steps:
            break
        if step == warm:
            t_warm = time.perf_counter()
        images, labels = images.to(device), labels.to(device)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        opt.step()
        if args.leak_device:  # the leak: each step's device batch kept alive
            kept_on_device.append(images)
        if args.leak_history:  # the leak: the loss kept as a tensor, with its graph, not .item()
            history.append(loss_fn(model(images), labels))
        loss_v = loss.item()
        step += 1
        mark(step)
        if step % args.print_every == 0:
            print(f"step {step} loss {loss_v:.6f} rss {rss_mb():.1f} MB tensors {tensor_count()}",
                  flush=True)
    t1 = time.perf_counter()
    timed = step - warm if t_warm is not None else step
    step_ms = (t1 - (t_warm or t0)) / max(timed, 1) * 1000
    print(f"done: steps {step} loss {loss_v:.6f} time {t1 - t0:.2f} s step_ms {step_ms:.2f} "
          f"rss {rss_mb():.1f} MB tensors {tensor_count()} leaked {len(LEAKED) * LEAK_BYTES}",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
