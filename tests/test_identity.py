"""A run's identity is what shapes its numbers, nothing else: edits to a method's presentation,
its prose, a page's knobs or the cost model's sizes keep every run key and checkpoint
fingerprint; an edit to a risk, or to a device default that changes arithmetic, changes them."""
import shutil
from dataclasses import replace

import pytest
import torch

from pusupport.book.store import run_key, trunk_key
from pusupport.core import checkpoint, identity, runtime
from pusupport.core.config import TrainConfig
from pusupport.data import synthetic

pytestmark = pytest.mark.usefixtures("computed_afresh")
CFG = TrainConfig(method="aapu", epochs=6, select_from=3, n_select=2, progress=False)
DATA = [synthetic(0, n_labeled=10, n_unlabeled=40, n_test=20)]

#: (module, text in it, its replacement): each edit can change no number.
PRESENTATION = {
    "aaPU's plot colour": ("core/methods.py", 'color="#d62728"', 'color="#000000"'),
    "VPU's departures prose, and a comment on it": (
        "core/baselines/vpu.py", "departures=(", "departures=(  # the reasons, reworded\n"
        '                    ("a departure added", "for a test"),'),
    "a page knob": ("core/page_settings.py", "n_seeds: int = 1", "n_seeds: int = 3"),
    "a size of the cost model": ("data/sizes.py", "Sizes(60_000, 10_000", "Sizes(60_001, 10_000"),
    "a risk's docstring": ("core/risks.py", "Non-negative PU risk (Kiryo et al. 2017; paper Eq. 9).",
                           "Kiryo et al.'s non-negative PU risk (paper Eq. 9)."),
    "an error's words": ("core/training.py", "training diverged —", "the training diverged —"),
    "a presentation field declared": (
        "core/methods.py", 'criterion: str = field(default="", metadata=SHOWN)',
        'criterion: str = field(default="", metadata=SHOWN)\n    note: str = field(default="n", metadata=SHOWN)'),
    "a run's progress postfix": ("core/training.py", '{"S": len(selected[0])}', '{"|S|": len(selected[0])}'),
    "a run's resume message": ("core/training.py", ": resumed from epoch", ": went on from epoch"),
}
#: Edits that change numbers.
NUMBERS = {
    "a risk": ("core/risks.py", "g_p.new_zeros(g_p.shape[:-1] + (0,)), prior, loss, beta, gamma,",
               "g_p.new_zeros(g_p.shape[:-1] + (0,)), prior * 1.01, loss, beta, gamma,"),
}


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A copy of the package that the identity reads; ``edit(module, old, new)`` changes it."""
    copy = tmp_path / "pusupport"
    shutil.copytree(identity.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(identity, "PACKAGE", copy)

    def edit(module, old, new):
        path = copy / module
        text = path.read_text()
        assert text.count(old) == 1, f"{old!r} is not once in {module}: update this test"
        path.write_text(text.replace(old, new))
    return edit


def keys(cfg=CFG) -> tuple:
    """Every key a run is known by: the store's, a trunk's, a checkpoint's."""
    return (identity.code_version(), run_key(cfg, [0], DATA, stacked=False),
            trunk_key(replace(cfg, method="nnpu"), [0], DATA, False, 3),
            repr(checkpoint.fingerprint(cfg, DATA, [0])))


@pytest.mark.parametrize("what", PRESENTATION)
def test_an_edit_that_cannot_change_a_number_keeps_every_key(package, what):
    before = keys()
    package(*PRESENTATION[what])
    assert keys() == before


@pytest.mark.parametrize("what", NUMBERS)
def test_an_edit_to_a_risk_changes_every_key(package, what):
    before = keys()
    package(*NUMBERS[what])
    assert all(a != b for a, b in zip(keys(), before))


def test_the_device_defaults_that_change_numbers_are_in_every_key(monkeypatch):
    """CUDA's default dropout streams (seeded per member) changed to another: on a (stand-in)
    GPU every key changes; on the CPU none does."""
    monkeypatch.setattr(runtime, "resolve_device", lambda d: torch.device("cpu" if d == "auto" else d))
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    gpu = replace(CFG, device="cuda")
    before, cpu = keys(gpu), keys()
    assert before != cpu
    monkeypatch.setitem(runtime.DEFAULTS, "cuda", {**runtime.DEFAULTS["cuda"], "dropout_streams": "global"})
    assert runtime.resolve(gpu).seeded_dropout is False
    assert all(a != b for a, b in zip(keys(gpu)[1:], before[1:])) and keys(gpu)[0] == before[0]
    assert keys() == cpu


def test_meaning_leaves_out_comments_docstrings_layout_and_error_words_only():
    same = ['def f(x):\n    "doc"\n    return x + 1  # one\n',
            'def f(x):\n    """Another doc."""\n\n    return (x +\n            1)\n']
    assert identity.meaning(same[0]) == identity.meaning(same[1])
    assert identity.meaning("def f(x):\n    return x + 2\n") != identity.meaning(same[0])
    raised = 'if x:\n    raise ValueError(f"bad {x}")\n'
    assert identity.meaning(raised) == identity.meaning('if x:\n    raise ValueError("worse")\n')
    assert identity.meaning(raised) != identity.meaning('if x:\n    raise TypeError("bad")\n')
    shown = 'Method("m", "M", "prose", risk=r, color="#fff", source="s", departures=(1,))'
    assert identity.meaning(shown) == identity.meaning('Method("m", "N", "other", risk=r)')
    assert identity.meaning(shown) != identity.meaning('Method("m", "M", "prose", risk=q)')


def test_what_only_shows_is_left_out_and_a_call_that_could_move_a_number_is_not():
    """Printed lines, a bar's postfix and its display options, a presentation field's
    declaration: left out. A shown line that also calls something else (it may draw a random
    number), and a field that is not shown: kept."""
    same = identity.meaning
    assert same("x = g(1)\nprint(f'at {len(s)}')\n") == same("x = g(1)\n")
    assert same("bar.set_postfix(S=len(s), e=f'{e:.4f}')\nx = 1\n") == same("x = 1\n")
    assert same("if x:\n    print(x)\n") == same("if x:\n    print(x, 'more')\n")
    assert same("print(torch.rand(1))\n") != same("")
    assert same("bar.set_postfix(S=next(it))\n") != same("")
    assert same("bar = progress(e, on, desc=name, leave=False)\n") == same("bar = progress(e, on)\n")
    assert same("bar = progress(e, on)\n") != same("bar = progress(f, on)\n")
    shown = "class M:\n    a: int = 1\n    label: str = field(default='x', metadata=SHOWN)\n"
    assert same(shown) == same("class M:\n    a: int = 1\n")
    assert same("class M:\n    a: int = field(default=1)\n") != same("class M:\n    pass\n")


@pytest.mark.parametrize("shows", ["print", "set_postfix", "set_description"])
@pytest.mark.parametrize("pure", ["len", "str", "int", "float", "round", "format", "dict", "min", "max",
                                  "abs", "isnan"])
def test_every_showing_call_is_left_out_with_every_pure_argument(shows, pure):
    assert identity.meaning(f"x = 1\nbar.{shows}(s={pure}(v))\n") == identity.meaning("x = 1\n")
    assert identity.meaning(f"x = 1\n{shows}(math.{pure}(v))\n") == identity.meaning("x = 1\n")


def test_the_canonical_form_is_fixed_text():
    """Every stored run is keyed through this text: a change of its form re-keys them all, so
    it is pinned (fields by name, None and empty lists left out, values by repr)."""
    assert identity.meaning("x = f(1, k=None)\n") == (
        "Module(body=[Assign(targets=[Name(id='x',ctx=Store())],value=Call(func=Name(id='f',"
        "ctx=Load()),args=[Constant(value=1)],keywords=[keyword(arg='k',value=Constant())]))])")
    assert identity.meaning("x = []\n") == "Module(body=[Assign(targets=[Name(id='x',ctx=Store())],value=List(ctx=Load()))])"


def test_a_method_s_presentation_is_left_out_in_every_form_and_nothing_else():
    """The shown fields of a Method call — positional (label, description) or by keyword, the
    call by name or through its module — and the words of an error, however nested; not
    another call's arguments, a method's name, its risk or an error's other arguments."""
    same = identity.meaning
    assert same('Method("m", "M", "prose", r)') == same('Method("m", "N", "other", r)')
    assert same('methods.Method("m", "M", risk=r, color="#000")') == same('methods.Method("m", "X", risk=r)')
    assert same('Method("m", "M", "p", r)') != same('Method("n", "M", "p", r)')
    assert same('Method("m", "M", "p", r)') != same('Method("m", "M", "p", q)')
    assert same('Other("m", "M", color="#000")') != same('Other("m", "X", color="#fff")')
    assert same('Method("m", "M", selects=True)') != same('Method("m", "M", selects=False)')
    assert same('raise E(fmt("a"), x)') == same('raise E(fmt("b"), x)')
    assert same('raise E("a", x)') != same('raise E("a", y)')


def test_a_data_set_is_known_by_its_name_prior_every_tensor_and_its_split():
    from pusupport.core.problem import hold_out
    d = synthetic(0, n_labeled=10, n_unlabeled=40, n_test=20)
    base = identity.data_identity(d)
    assert set(base) == {"name", "prior", "tensors"} and base["prior"] == float(d.prior)
    assert identity.data_identity(replace(d, name="other"))["name"] == "other"
    assert identity.data_identity(replace(d, prior=0.3))["prior"] == 0.3
    held = hold_out(d, 0.25, 0)
    split = replace(held, x_val_u=held.x_val_u + 1)             # the split's rows count
    assert len({identity.data_identity(x)["tensors"] for x in (d, held, split)}) == 3
    # a checksum reads dtype and shape beside the bytes
    zeros = torch.zeros(6, dtype=torch.int32)
    assert len({identity.checksum(t) for t in (zeros, zeros.float(), zeros.reshape(2, 3))}) == 3
    assert identity.checksum(zeros, zeros) != identity.checksum(zeros)
    # computed once per tensor, again once it is changed in place (a new tensor: its own)
    x = torch.arange(12.0)
    first = identity.checksum(x, zeros)
    assert identity.checksum(x, zeros) == first == identity.checksum(x.clone(), zeros)
    x[3] += 1
    assert identity.checksum(x, zeros) == identity.checksum(x.clone(), zeros) != first
    with torch.inference_mode():                   # no version counter: computed every time
        y = torch.arange(12.0)
    assert identity.checksum(y, zeros) == first


#: (module, text in it, its replacement, the methods whose runs it shapes among those below).
BASELINE_EDITS = {
    "Robust-PU's weight": ("core/baselines/robustpu.py", "return torch.exp(-loss / lam ** 2)",
                           "return torch.exp(-loss / lam ** 3)", {"robustpu"}),
    "MixUp's draws, which VPU and Dist-PU share": (
        "core/baselines/draws.py", "import numpy as np", "import numpy as np\nSHIFT = 1", {"vpu", "distpu"}),
    "nnPUSB's threshold, which scores every run that reads π": (
        "core/baselines/nnpusb.py", "from ..risks import nnpu_risk", "from ..risks import nnpu_risk\nSHIFT = 1",
        {"nnpu", "aapu", "robustpu", "distpu", "negsel"}),
    "negative selection": ("core/baselines/negsel.py", "from functools import partial",
                           "from functools import partial\nSHIFT = 1", {"negsel"}),
}
METHODS_SEEN = ("nnpu", "aapu", "robustpu", "vpu", "distpu", "negsel")


@pytest.mark.parametrize("what", BASELINE_EDITS)
def test_a_baseline_s_code_shapes_only_the_runs_that_execute_it(package, what):
    """A run is keyed by the code its method executes: an edit to one baseline's module
    re-keys that method's runs (and those of the methods that import it, or whose runs it
    scores at its threshold), never another's; the package-wide version (committed parts,
    checkpoints) moves either way."""
    module, old, new, moved = BASELINE_EDITS[what]
    run = {m: (identity.code_version(methods=[m]), run_key(replace(CFG, method=m), [0], DATA, stacked=False))
           for m in METHODS_SEEN}
    whole = identity.code_version()
    package(module, old, new)
    after = {m: (identity.code_version(methods=[m]), run_key(replace(CFG, method=m), [0], DATA, stacked=False))
             for m in METHODS_SEEN}
    assert {m for m in METHODS_SEEN if after[m] != run[m]} == moved
    assert all(a != b for m in moved for a, b in zip(after[m], run[m]))
    assert identity.code_version() != whole


def test_a_method_s_code_is_the_package_less_the_baselines_no_run_of_it_executes():
    sources = identity._sources(None)
    assert identity._used_by(["nnpu"], sources) == {"core/baselines/nnpusb.py"}
    assert identity._used_by(["vpu"], sources) == {"core/baselines/vpu.py", "core/baselines/draws.py"}
    assert identity._used_by(["aapu_oracle"], sources) == {"core/baselines/oracle.py", "core/baselines/nnpusb.py"}
    assert identity._used_by(["nnpu", "vpu"], sources) == {"core/baselines/nnpusb.py", "core/baselines/vpu.py",
                                                           "core/baselines/draws.py"}
    assert identity._registered(sources)["robustpu"] == "core/baselines/robustpu.py"
    assert "nnpu" not in identity._registered(sources)       # the paper's methods: core/methods.py
    every = list(identity._registered(sources))              # every baseline's runs: the whole package
    assert identity.code_version(methods=every) == identity.code_version()


def test_a_checksum_is_computed_once_while_its_tensors_live_unmodified(monkeypatch):
    """A store keys every run by its data's checksum, kept while the same tensors live
    unmodified: a second call hashes nothing; other tensors with the same bytes, an
    in-place change or a tensor made in inference mode (no version counter) hash again; a
    tensor's end forgets its entry."""
    import gc
    import hashlib
    calls, real = [], hashlib.sha256
    monkeypatch.setattr(identity.hashlib, "sha256", lambda *a: calls.append(1) or real(*a))
    x, y = torch.arange(6.0).reshape(2, 3), torch.ones(4)
    first = identity.checksum(x, y)
    assert len(first) == 16 and len(calls) == 1
    assert identity.checksum(x, y) == first and len(calls) == 1              # kept
    assert identity.checksum(x.clone(), y) == first and len(calls) == 2      # the same bytes
    x.add_(1)
    assert identity.checksum(x, y) != first and len(calls) == 3              # changed in place
    with torch.inference_mode():
        z = torch.ones(2)
    assert identity.checksum(z) == identity.checksum(z) and len(calls) == 5  # every time
    key = (id(x), id(y))
    assert key in identity._SUMS
    del x
    gc.collect()
    assert key not in identity._SUMS                                          # forgotten with x
