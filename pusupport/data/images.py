"""Your own images: an ImageFolder layout decoded once into uint8 tensors, and loose image
files to predict on. Every unreadable file is named; greyscale stays one channel."""
from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path

import torch

from ..core.problem import LabeledData
from .files import DatasetNotFoundError, cached, data_root
from ..core.progress import progress

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".tif", ".tiff", ".webp")


def image_size_pair(image_size) -> tuple[int, int] | None:
    """``image_size`` as (H, W): an int n means (n, n)."""
    if image_size is None:
        return None
    pair = (image_size, image_size) if isinstance(image_size, int) else tuple(image_size)
    if len(pair) != 2 or not all(isinstance(n, int) and n > 0 for n in pair):
        raise ValueError(f"image_size must be an int or a pair (H, W) of ints > 0, got {image_size!r}")
    return pair


def _list_images(folder: Path):
    """The class folders, their images' paths (str, by name in each), each image's class
    index, and a digest of every image's class folder, name, size and modification time:
    moving, renaming, replacing or adding an image changes it (and so rebuilds the cache).
    One ``os.scandir`` pass, no Path per file: CIFAR-10's 60,000 files took 2.2 s a load
    through ``pathlib``."""
    classes = sorted(e.name for e in os.scandir(folder) if e.is_dir())
    files, labels, digest = [], [], hashlib.sha1()
    for k, c in enumerate(classes):
        items = sorted((e for e in os.scandir(folder / c)
                        if os.path.splitext(e.name)[1].lower() in IMAGE_EXTENSIONS), key=lambda e: e.name)
        for e in items:
            st = e.stat()
            digest.update(f"{c}/{e.name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        files += [e.path for e in items]
        labels += [k] * len(items)
    return classes, files, labels, digest.hexdigest()


def _decode(path: Path, mode):
    from torchvision.io import decode_image
    with warnings.catch_warnings():        # torchvision 0.29 announces a move to torchcodec
        warnings.simplefilter("ignore", DeprecationWarning)
        return decode_image(torch.frombuffer(bytearray(path.read_bytes()), dtype=torch.uint8), mode=mode)


def decode_images(files, image_size=None, skip_unreadable: bool = False):
    """Decode ``files`` into one uint8 tensor (N, C, H, W); returns (images, kept indices).

    All greyscale → one channel; otherwise RGB (alpha dropped). Images of different
    sizes need ``image_size`` (int or (H, W)), to which every image is resized. An
    unreadable file is an error naming it, unless ``skip_unreadable`` (then a warning
    counts them).
    """
    from torchvision.io import ImageReadMode
    from torchvision.transforms.functional import resize
    size = image_size_pair(image_size)
    images, kept, bad = [], [], []
    for i, f in enumerate(progress(files, desc="decoding images", leave=False, mininterval=1)):
        try:
            images.append(_decode(f, ImageReadMode.UNCHANGED))
            kept.append(i)
        except Exception as err:           # truncated, corrupt, or not an image at all
            if not skip_unreadable:
                raise ValueError(f"cannot read the image {f} ({type(err).__name__}): delete or "
                                 "replace it, or pass skip_unreadable=True (command line: "
                                 "--skip-unreadable) to leave unreadable files out") from err
            bad.append(f)
    if bad:
        warnings.warn(f"skipped {len(bad)} unreadable file(s), e.g. {bad[0]}", stacklevel=2)
    if not images:
        raise ValueError(f"no readable images among {len(files)} file(s)")
    if {img.shape[0] for img in images} != {1}:
        images = [img if img.shape[0] == 3 else _decode(files[i], ImageReadMode.RGB)
                  for img, i in zip(images, kept)]
    if size is not None:
        images = [img if tuple(img.shape[1:]) == size else resize(img, list(size), antialias=True)
                  for img in images]
    shapes = {}
    for img, i in zip(images, kept):
        shapes.setdefault(tuple(img.shape[1:]), files[i])
    if len(shapes) > 1:
        examples = ", ".join(f"{h}×{w} (e.g. {f})" for (h, w), f in list(shapes.items())[:3])
        raise ValueError(f"images have different sizes: {examples}: pass image_size=(H, W) "
                         "(or an int; command line: --image-size H W) to resize them all")
    return torch.stack(images), kept


#: What a missing folder (or table) of yours needs: data of yours are never downloaded.
YOUR_DATA = ("Give the path of your data: image_folder=<folder> (train/<class>/*, test/<class>/*) "
             "or features=<table> on the own-data page and in Python; --images DIR or "
             "--features TABLE on the command line.")


def load_image_folder(path, image_size=None, data_dir=None, skip_unreadable: bool = False) -> LabeledData:
    """An ImageFolder layout ``path/{train,test}/<class>/<image>`` as uint8 tensors.

    Decoded once and cached under ``<data_dir>/cache`` (see :func:`decode_images`).
    """
    path = Path(path)
    if not (path / "train").is_dir() or not (path / "test").is_dir():
        missing = " and ".join(f"{s}/" for s in ("train", "test") if not (path / s).is_dir())
        name = f"{missing} inside image folder {path}" if path.is_dir() else f"image folder {path}"
        split = path.name in ("train", "test") and (path.parent / "train").is_dir()
        raise DatasetNotFoundError(name, path, ["train/<class>/*", "test/<class>/*"], "",
                                   "expected train/ and test/ sub-folders with one folder per "
                                   "class" + (f" — {path} is itself the {path.name}/ split: give its "
                                              f"parent, {path.parent}" if split else ""),
                                   fix=YOUR_DATA)
    listed = {split: _list_images(path / split) for split in ("train", "test")}
    if listed["train"][0] != listed["test"][0]:
        raise ValueError(f"{path}: train and test have different class folders "
                         f"({listed['train'][0]} vs {listed['test'][0]})")
    if not listed["train"][1]:
        raise ValueError(f"{path / 'train'} holds no images ({', '.join(IMAGE_EXTENSIONS)}) in "
                         "class folders")
    classes, _, labels, _ = listed["train"]
    empty = [c for k, c in enumerate(classes) if k not in set(labels)]
    if empty:
        raise ValueError(f"{path / 'train' / empty[0]} holds no images: every class needs "
                         "training images — add some, or remove the folder (from test/ too)")
    signature = {"path": str(path.resolve()), "image_size": image_size_pair(image_size),
                 "skip_unreadable": skip_unreadable,
                 **{split: v[3] for split, v in listed.items()}}
    key = "imagefolder-" + hashlib.sha1(repr((signature["path"], signature["image_size"],
                                              skip_unreadable)).encode()).hexdigest()[:12]

    def build():
        out = {}
        for split, (_, files, labels, _) in listed.items():
            if not files:
                out[split] = (torch.zeros(0, 3, *(image_size_pair(image_size) or (1, 1)),
                                          dtype=torch.uint8), torch.zeros(0, dtype=torch.long))
                continue
            x, kept = decode_images([Path(f) for f in files], image_size, skip_unreadable)
            out[split] = (x, torch.tensor(labels)[kept])
        if len({x.shape[1] for x, _ in out.values() if len(x)}) > 1:     # colour in one split only
            out = {split: (x.expand(-1, 3, -1, -1).contiguous() if x.shape[1] == 1 else x, y)
                   for split, (x, y) in out.items()}
        return out
    data = cached(data_root(data_dir), key, signature, build)
    return LabeledData(*data["train"], *data["test"], listed["train"][0])
