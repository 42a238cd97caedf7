"""Every device-conditional choice of a run, as an explicit setting with a default per device.

A :class:`~pusupport.core.config.TrainConfig` names the device and four choices; "auto"
(or None) takes the device's default below. :func:`resolve` turns them into a
:class:`Runtime` that the loop uses and :meth:`Runtime.describe` prints.

================  =======================================  ===============================
setting           CUDA default                             CPU default
================  =======================================  ===============================
autocast          bf16 where the GPU has it                bf16 where the CPU has native
                                                           bf16 instructions (avx512_bf16,
                                                           amx_bf16), else float32
channels_last     on (convolutional models)                on (convolutional models)
generators        on the GPU (index draws)                 on the CPU
dropout_streams   each member's own, seeded with its seed  "global": member k continues
                                                           torch's global stream, exactly
                                                           as its single run would
compile           off                                      off
stacked seeds     the models of :data:`STACKED` measured     the models of :data:`STACKED`
                  on this GPU (else on an H200)            measured on this CPU (else on
                                                           the development machine)
stacked settings  the models of :data:`SETTINGS_STACKED`   likewise (none: measured slower)
================  =======================================  ===============================

"Stacked seeds" is how a page trains a method's K seeds: as one stacked network
(:mod:`pusupport.core.stacking`, the same maths) or one after the other; a model stacks
on a device only where a measurement there says it pays (:data:`STACKED`, each row citing
it). On an NVIDIA H200 at the ``paper`` profile, Kiryo's CNN took 0.82 s an epoch for one
seed and 2.03 s a member for 4 seeds stacked (10 seeds: 1.66 s), and the Co-teaching CNN
1.36 s against 1.61 s a member: on CUDA the CNNs train one seed at a time, the §4.1 MLP's
seeds stacked (3.1× faster). On this book's
2-core CPU, one thread a run, stacking pays only where a step is overhead-bound: the
§4.1 MLP trains 10 seeds 2.0× faster stacked, but 6 Fashion-MNIST MLPs train 2.0× and
6 CIFAR-10 CNNs 1.25× faster one by one (channels_last), their stacked activations no
longer fitting the caches (``make bench``: ``stacking``). "Stacked settings" goes further:
a page's runs that differ only in values train as one network of runs × seeds
(:func:`~pusupport.core.training.train_grid`). On this CPU the 10-seed MLP step is already
bound by its bf16 matmuls, so the readings grid's 110 members train 0.7× as fast as its
runs apart (``make bench``: ``readings``); on a GPU, where small steps are launch-bound,
it is the default.

The paper states no precision; bf16 autocast is this book's choice for speed (scores
and risks are computed in float32; the tests bound its effect on final test error).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

AUTOCAST = ("auto", "bf16", "off")
GENERATORS = ("auto", "device", "cpu")
DROPOUT_STREAMS = ("auto", "global", "seeded")
#: The machines the layout tables were measured on, each a (device type, what it is) pair:
#: a CPU by its native bf16 instructions (the 2-core AMD EPYC development machine), a GPU by
#: its name. Another machine borrows its device type's measurement (:func:`measured`).
CPU_MEASURED = ("cpu", "avx512_bf16")
GPU_MEASURED = ("cuda", "NVIDIA H200")
H100_MEASURED = ("cuda", "NVIDIA H100 80GB HBM3")
#: Per machine, the models whose seeds train faster as one stacked network, from
#: measurements: CPU ``make bench`` (``stacking``): the §4.1 MLP 2.0× faster stacked, the
#: Fashion-MNIST MLP and CIFAR-10 CNN faster one by one; CUDA ``make bench DEVICE=cuda``
#: (``bench/results-cuda.json``, H200, ``paper`` settings, 4 seeds): the §4.1 MLP 3.1×
#: faster stacked, Kiryo's CNN 0.41× and the Co-teaching CNN 0.84× (slower); H100
#: (``bench/results-cuda-h100.json``): 2.9×, 0.41× and 0.80×.
STACKED = {CPU_MEASURED: ("mlp",), GPU_MEASURED: ("mlp",), H100_MEASURED: ("mlp",)}
#: Per machine, the models whose runs differing only in values train as one network of
#: runs × seeds: none measured faster (CPU ``make bench`` ``readings``: 0.7× as fast; CUDA,
#: H200: the CIFAR-10 page's aaPU + nnPU × 10 seeds 2.7× slower a member than one run).
SETTINGS_STACKED = {CPU_MEASURED: (), GPU_MEASURED: (), H100_MEASURED: ()}
#: Per machine, how many runs of a model train at once on one GPU (Ray tasks with a
#: fraction of it; while that many fit its memory), from measurements: two runs sharing an
#: H200 gave the §4.1 MLP 1.81× one run's throughput, Kiryo's CNN 0.98× and the
#: Co-teaching CNN 0.92× (``bench/results-cuda.json``: ``shared_throughput``) — the CNNs
#: one run a GPU; on an H100 1.89×, 1.00× and 0.94×.
SHARED = {GPU_MEASURED: {"mlp": 2}, H100_MEASURED: {"mlp": 2}}


def machine(device_type: str) -> tuple[str, str | None]:
    """This machine as the layout tables key it: ("cpu", its bf16 instructions or "no native
    bf16"), ("cuda", the GPU's name); a GPU not visible here: ("cuda", None)."""
    if device_type == "cpu":
        return "cpu", cpu_bf16_instructions() or "no native bf16"
    visible = device_type == "cuda" and torch.cuda.is_available()
    return device_type, torch.cuda.get_device_name() if visible else None


#: The machines that borrowed another's measurements in this process (said once each).
_BORROWED: set = set()


class LayoutNote(UserWarning):
    """This machine's layouts are chosen from another's measurements: a build's speed may
    suffer, never its numbers (one run on your data has no layout to choose: the command
    line and PUClassifier say nothing of it)."""


def measured(table: dict, device_type: str, empty=()):
    """``table``'s entry for this machine (:func:`machine`); a machine not measured borrows
    the one measured for its device type, saying so in a warning, once (a GPU that is not
    here, as when the cost model prices a GPU plan on a CPU, borrows without a word)."""
    here = machine(device_type)
    if here in table:
        return table[here]
    borrowed = next((k for k in table if k[0] == device_type), None)
    if borrowed is None:
        return empty
    if here[1] is not None and here not in _BORROWED:
        _BORROWED.add(here)
        bench = "make bench DEVICE=cuda" if device_type == "cuda" else "make bench"
        warnings.warn(f"layouts: nothing measured on this {device_type} ({here[1]}); borrowing the "
                      f"{borrowed[1]} {device_type}'s measurements (`{bench}` measures this one)",
                      LayoutNote, stacklevel=2)
    return table[borrowed]


#: Per device type, what "auto" means for the choices that change numbers (the table above).
DEFAULTS = {"cuda": {"generators": "device", "dropout_streams": "seeded"},
            "cpu": {"generators": "cpu", "dropout_streams": "global"}}


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' → CUDA when available, else CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu' or 'cuda'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' but no CUDA GPU is visible: use device='auto' or 'cpu'")
    return dev


@lru_cache(maxsize=None)
def cpu_bf16_instructions() -> str | None:
    """The CPU's native bf16 instruction set ('amx_bf16' or 'avx512_bf16'), or None."""
    info = Path("/proc/cpuinfo")
    flags = set(info.read_text().split()) if info.exists() else set()
    return next((f for f in ("amx_bf16", "avx512_bf16") if f in flags), None)


def bf16_default(device: torch.device) -> tuple[bool, str]:
    """Whether "auto" autocast means bf16 on ``device``, and why."""
    if device.type == "cuda":
        ok = torch.cuda.is_bf16_supported()
        return ok, "this GPU has bf16" if ok else "this GPU lacks bf16"
    found = cpu_bf16_instructions()
    return (True, f"this CPU has {found}") if found else (False, "this CPU lacks native bf16")


@dataclass(frozen=True)
class Runtime:
    """The resolved device-conditional choices of one run."""

    device: torch.device
    bf16: bool
    channels_last: bool
    generator_device: torch.device
    seeded_dropout: bool
    compile: bool
    stack_seeds: bool = True
    stack_settings: bool = True
    why_bf16: str = ""

    def precision(self) -> str:
        """The choices that shape a run's numbers on this device."""
        return (f"{self.device.type}: autocast {'bf16' if self.bf16 else 'off (float32)'}"
                f"{f' ({self.why_bf16})' if self.why_bf16 else ''}, channels_last "
                f"{'on' if self.channels_last else 'off'}, generators on {self.generator_device.type}, "
                f"dropout streams {'seeded per member' if self.seeded_dropout else 'global'}, "
                f"compile {'on' if self.compile else 'off'}")

    def numbers(self) -> dict:
        """The choices that change a run's numbers, part of its identity
        (:mod:`~pusupport.core.identity`): where a default here changes, stored runs retrain."""
        return {"device": self.device.type, "bf16": self.bf16,
                "bf16_instructions": cpu_bf16_instructions() if self.bf16 and self.device.type == "cpu"
                else None, "channels_last": self.channels_last,
                "generators": self.generator_device.type, "seeded_dropout": self.seeded_dropout,
                "compile": self.compile}

    def layout(self) -> str:
        """How a page's seeds and runs share a network (the same maths either way)."""
        return (f"seeds {'stacked' if self.stack_seeds else 'one by one'}"
                f"{', settings stacked' if self.stack_settings and self.stack_seeds else ''}")

    def describe(self) -> str:
        return f"{self.precision()}, {self.layout()}"


def resolve(cfg) -> Runtime:
    """The :class:`Runtime` of a :class:`~pusupport.core.config.TrainConfig`."""
    device = resolve_device(cfg.device)
    cuda = device.type == "cuda"
    if cfg.autocast == "auto":
        bf16, why = bf16_default(device)
    else:
        bf16, why = cfg.autocast == "bf16", "set"
    if cfg.dropout_streams == "global" and cuda:
        raise ValueError("dropout_streams='global' needs the CPU generator: use 'auto' or "
                         "'seeded' on CUDA")
    default = DEFAULTS["cuda" if cuda else "cpu"]
    generators = default["generators"] if cfg.generators == "auto" else cfg.generators
    dropout = default["dropout_streams"] if cfg.dropout_streams == "auto" else cfg.dropout_streams
    return Runtime(
        device=device, bf16=bf16, why_bf16=why,
        channels_last=True if cfg.channels_last is None else cfg.channels_last,
        generator_device=device if generators == "device" and cuda else torch.device("cpu"),
        seeded_dropout=dropout == "seeded",
        compile=cfg.compile, stack_seeds=cfg.model.name in measured(STACKED, device.type),
        stack_settings=cfg.model.name in measured(SETTINGS_STACKED, device.type))
