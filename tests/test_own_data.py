"""Your own data: greyscale digit-like PNGs in integer-named class folders, any size, and one
clear error per bad input."""
from pathlib import Path

import numpy as np
import pytest
import torch

from pusupport.data import LabeledData, from_arrays, make_pu
from pusupport.data.images import decode_images, load_image_folder
from pusupport.core.models import build_model
from pusupport.apps.saved import load_model, save_model
from pusupport.core.config import ModelConfig


def shape_image(label: int, rng, size=28) -> np.ndarray:
    """A noisy greyscale drawing: a bar whose angle and place depend on the class."""
    img = rng.normal(30, 20, (size, size))
    c = size // 2
    for t in np.linspace(-0.4, 0.4, 3 * size):
        y = int(c + t * size * np.sin(label * 0.6)) % size
        x = int(c + t * size * np.cos(label * 0.6)) % size
        img[max(0, y - 1):y + 2, max(0, x - 1):x + 2] = 220 + rng.normal(0, 10)
    return np.clip(img, 0, 255).astype(np.uint8)


def digit_folder(root: Path, classes=range(4), per_class=40, size=28) -> Path:
    from PIL import Image
    rng = np.random.default_rng(0)
    for split, n in (("train", per_class), ("test", per_class // 2)):
        for k in classes:
            (root / split / str(k)).mkdir(parents=True, exist_ok=True)
            for i in range(n):
                Image.fromarray(shape_image(k, rng, size), mode="L").save(root / split / str(k) / f"{i}.png")
    return root


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return digit_folder(tmp_path_factory.mktemp("digits") / "digits")


def test_greyscale_folder_with_integer_classes(digits, tmp_path):
    raw = load_image_folder(digits, data_dir=tmp_path)
    assert raw.classes == ["0", "1", "2", "3"] and raw.x_train.shape == (160, 1, 28, 28)
    d = make_pu("digits", raw, [0, 2], n_labeled=20)            # ints name integer folders
    assert d.prior == pytest.approx(0.5) and d.x_p.shape[1:] == (1, 28, 28)
    model = build_model("kiryo_cnn", d.x_u.shape, width=0.125)   # a CNN for 1×28×28 inputs
    assert model(d.x_u[:3]).shape == (3,)


def test_image_size_int_or_pair_resizes(digits, tmp_path):
    files = sorted((digits / "train" / "0").glob("*.png"))[:3]
    assert decode_images(files, 32)[0].shape == (3, 1, 32, 32)
    assert decode_images(files, (20, 24))[0].shape == (3, 1, 20, 24)
    with pytest.raises(ValueError, match="image_size must be an int or a pair"):
        decode_images(files, (20,))


def test_a_corrupt_image_is_named(digits, tmp_path):
    bad = tmp_path / "broken.png"
    bad.write_bytes((digits / "train" / "0" / "0.png").read_bytes()[:40])      # truncated
    with pytest.raises(ValueError, match=f"cannot read the image {bad}.*skip_unreadable=True"):
        decode_images([digits / "train" / "0" / "0.png", bad])


def test_a_text_file_named_png_can_be_skipped_and_is_counted(digits, tmp_path):
    fake = tmp_path / "notes.png"
    fake.write_text("not an image")
    good = sorted((digits / "train" / "1").glob("*.png"))[:2]
    with pytest.raises(ValueError, match=f"cannot read the image {fake}"):
        decode_images([good[0], fake, good[1]])
    with pytest.warns(UserWarning, match=r"skipped 1 unreadable file\(s\), e.g. .*notes.png"):
        images, kept = decode_images([good[0], fake, good[1]], skip_unreadable=True)
    assert kept == [0, 2] and images.shape[0] == 2


def test_mixed_sizes_need_image_size(digits, tmp_path):
    folder = digit_folder(tmp_path / "mixed", classes=[0, 1], per_class=4)
    from PIL import Image
    Image.fromarray(np.zeros((30, 30), np.uint8), mode="L").save(folder / "train" / "1" / "big.png")
    with pytest.raises(ValueError, match=r"different sizes: 28×28 \(e.g. .*\), 30×30 \(e.g. .*big.png\)"
                                         r".*pass image_size"):
        load_image_folder(folder, data_dir=tmp_path)
    assert load_image_folder(folder, image_size=28, data_dir=tmp_path).x_train.shape[1:] == (1, 28, 28)


def toy(classes=("a", "b")):
    y = torch.arange(40) % len(classes)
    return LabeledData(torch.rand(40, 3), y, torch.rand(10, 3), torch.arange(10) % len(classes),
                       list(classes))


def test_a_single_class_and_an_empty_positive_class_are_refused():
    with pytest.raises(ValueError, match="every training example is in a positive class.*negatives"):
        make_pu("one", toy(("a",)), ["a"], n_labeled=5)
    empty = toy(("a", "b", "c"))
    empty.y_train[empty.y_train == 2] = 0                        # class "c" has no images
    with pytest.raises(ValueError, match=r"positive class\(es\) \['c'\] have no training examples"):
        make_pu("empty", empty, ["c"], n_labeled=5)


def test_nan_or_inf_features_are_refused_with_a_count():
    data = toy()
    data.x_train[3, 1] = float("nan")
    data.x_train[7, 0] = float("inf")
    with pytest.raises(ValueError, match=r"2 training row\(s\) hold NaN or inf"):
        make_pu("nan", data, ["b"], n_labeled=5)
    clean = toy()
    clean.x_test[0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"1 test row\(s\) hold NaN or inf"):
        make_pu("nan", clean, ["b"], n_labeled=5)
    with pytest.raises(ValueError, match=r"1 training row\(s\) hold NaN"):
        from_arrays(data.x_train[:4], [0], prior=0.3)


def test_from_arrays_needs_a_prior_and_rows_of_x():
    with pytest.raises(ValueError, match="from_arrays needs prior=.*estimate_prior"):
        from_arrays(np.random.rand(10, 2), [0, 1])
    with pytest.raises(ValueError, match=r"labeled_index must name rows of x \(0 to 9\); got 2 "
                                         r"index\(es\) from 3 to 10: pass the row numbers"):
        from_arrays(np.random.rand(10, 2), [3, 10], prior=0.3)


def test_a_given_prior_that_is_not_a_fraction_names_the_fix():
    from pusupport.apps import own
    data = from_arrays(np.random.rand(10, 2), [0, 1], prior=0.3)
    for bad in ("abc", 1.5, 0, True):
        with pytest.raises(ValueError, match="give π, the positive fraction of U, as a number "
                                             "strictly between 0 and 1"):
            own.choose_prior(data, bad)


def saved(tmp_path, shape=(1, 28, 28)):
    model = build_model("kiryo_cnn", (1, *shape), width=0.125)
    path = save_model(tmp_path / "model.pt", model, ModelConfig("kiryo_cnn", width=0.125), shape,
                      {"kind": "images", "image_size": list(shape[1:]), "channels": shape[0]}, 0.4,
                      classes=["0", "1"], positive_classes=["1"])
    return model, path


def test_a_saved_model_scores_as_the_model_in_memory(tmp_path):
    model, path = saved(tmp_path)
    loaded = load_model(path)
    x = torch.rand(5, 1, 28, 28)
    from pusupport.core.models import predict
    assert torch.equal(loaded.scores(x), predict(model, x))
    assert loaded.prior == 0.4 and loaded.positive_classes == ["1"]
    assert torch.equal(loaded.predict(x), (predict(model, x) > 0).long())


def test_a_truncated_model_file_names_its_path_and_the_fix(tmp_path):
    _, path = saved(tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match=f"saved model {path} cannot be read.*train it again"):
        load_model(path)
    with pytest.raises(FileNotFoundError, match="no saved model at"):
        load_model(tmp_path / "missing.pt")


def test_a_model_that_cannot_take_the_input_shape_says_so(tmp_path):
    _, path = saved(tmp_path)
    with pytest.raises(ValueError, match=r"takes inputs of shape \(1, 28, 28\).*got \(3, 32, 32\).*image_size"):
        load_model(path).scores(torch.rand(2, 3, 32, 32))
    with pytest.raises(ValueError, match="needs images of at least 28×28"):
        build_model("coteaching_cnn", (2, 1, 16, 16))
    with pytest.raises(ValueError, match="takes images .* use an MLP"):
        build_model("kiryo_cnn", (2, 10))


def test_one_colour_image_makes_every_split_colour(tmp_path):
    from PIL import Image
    folder = digit_folder(tmp_path / "mixed", classes=[0, 1], per_class=4)
    Image.new("RGB", (28, 28), (200, 10, 10)).save(folder / "train" / "1" / "red.png")
    raw = load_image_folder(folder, data_dir=tmp_path)
    assert raw.x_train.shape[1:] == (3, 28, 28) and raw.x_test.shape[1:] == (3, 28, 28)
    grey = raw.x_test[0]
    assert torch.equal(grey[0], grey[1]) and torch.equal(grey[1], grey[2])   # grey as R = G = B


def test_each_image_size_has_its_own_cache(tmp_path, digits):
    import warnings
    load_image_folder(digits, image_size=20, data_dir=tmp_path)
    load_image_folder(digits, image_size=24, data_dir=tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                          # no "stale cache" rebuild
        assert load_image_folder(digits, image_size=20, data_dir=tmp_path).x_train.shape[2:] == (20, 20)
    assert len(list((tmp_path / "cache").glob("imagefolder-*.pt"))) == 2


def test_zero_epochs_is_an_error_not_the_default():
    from pusupport.apps import own
    with pytest.raises(ValueError, match="epochs must be an int >= 1, got 0"):
        own.train_config(100, ModelConfig("mlp"), epochs=0)


def test_a_degenerate_trained_classifier_is_reported():
    from pusupport.apps import own
    from pusupport.core.config import TrainConfig
    from pusupport.core.training import RunResult

    class Constant(torch.nn.Module):
        def __init__(self, value):
            super().__init__()
            self.value = torch.nn.Parameter(torch.tensor(value))

        def forward(self, x):
            return self.value.expand(len(x))
    x_test = np.column_stack([np.linspace(0, 1, 8), np.zeros(8)])          # x₁ − 0.5 changes sign
    data = from_arrays(np.random.default_rng(0).random((30, 2)), [0, 1, 2], x_test=x_test,
                       y_test=np.array([-1] * 4 + [1] * 4), prior=0.4)
    for value, said in ((0.5, "constant"), (-0.5, "constant")):
        warning = own.check_trained(RunResult(None, Constant(value), None, TrainConfig()), data)
        assert said in warning and "(epochs=…, lr=…)" in warning and "prior=…" in warning
        cli = own.check_trained(RunResult(None, Constant(value), None, TrainConfig()), data, "cli")
        assert "(--epochs N, --lr RATE, --batch-size N)" in cli and "--prior P" in cli
        vpu = own.check_trained(RunResult(None, Constant(value), None, TrainConfig(method="vpu")),
                                data, "cli")                  # a method without π: no π to check
        assert vpu.endswith("VPU uses no π: train longer or faster (--epochs N, --lr RATE, "
                            "--batch-size N)") and "--prior" not in vpu
    good = torch.nn.Linear(2, 1)
    with torch.no_grad():
        good.weight.copy_(torch.tensor([[1.0, 0.0]]))
        good.bias.fill_(-0.5)
    class Flat(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = good

        def forward(self, x):
            return self.lin(x).squeeze(-1)
    assert own.check_trained(RunResult(None, Flat(), None, TrainConfig()), data) == ""
    with torch.no_grad():                                  # the same boundary, labels swapped
        good.weight.neg_()
        good.bias.neg_()
    warning = own.check_trained(RunResult(None, Flat(), None, TrainConfig()), data)
    assert warning.startswith("the test error 1.000 is no better than calling every test point "
                              "negative (0.500): check π first (prior=…; this run used 0.400")


def test_the_own_data_page_takes_any_usable_method_and_vpu_no_prior():
    from pusupport.book.experiments.own_data import input_line, own_data_settings
    from pusupport.book.pages import resolve_page
    kw = dict(profile="smoke", device="cpu", seeds=None, data_dir=None, output_dir="results",
              dry_run=0, checkpoints=None, runner=None, image_folder=None, features="t.csv",
              label_column=None, positive_classes=[1], image_size=None, prior=None, model=None,
              n_labeled=None, epochs=None, lr=None)
    s = own_data_settings(resolve_page("own_data", method="vpu", **kw))
    assert s["method"] == "vpu" and "method: vpu; π: not used by the method" in input_line(s)
    assert own_data_settings(resolve_page("own_data", method=None, **kw))["method"] == "aapu"
    with pytest.raises(ValueError, match=r"method='vpu' never uses π: drop prior=…"):
        own_data_settings(resolve_page("own_data", method="vpu", **{**kw, "prior": 0.3}))
    with pytest.raises(ValueError, match=r"unknown method 'negsel': use one of \[.*'vpu'\]"):
        own_data_settings(resolve_page("own_data", method="negsel", **kw))


def test_the_own_data_page_writes_nothing_into_the_reader_s_folder(tmp_path):
    """An output folder whose results (model.pt, the ranking) would land inside the image
    folder is refused before any work, naming the fix."""
    from pusupport.book.experiments.own_data import own_data_settings
    from pusupport.book.pages import resolve_page
    mine = tmp_path / "mine"
    (mine / "labeled").mkdir(parents=True)
    kw = dict(profile="smoke", device="cpu", seeds=None, data_dir=None, dry_run=0, checkpoints=None,
              runner=None, image_folder=str(mine), features=None, label_column=None, positive_classes=None,
              image_size=None, prior=None, model=None, n_labeled=None, epochs=None, lr=None, method=None)
    with pytest.raises(ValueError, match=r"output_dir .*own_data lies inside the input image_folder .*: writing "
                                         r"it would add files to your data; give output_dir a path outside"):
        own_data_settings(resolve_page("own_data", output_dir=str(mine), **kw))
    assert own_data_settings(resolve_page("own_data", output_dir=str(tmp_path / "out"), **kw))["pu"]
    assert list(mine.rglob("*")) == [mine / "labeled"]


def test_the_own_data_plan_is_priced_at_the_page_s_profile():
    """The cost line prices what the page trains: the P-vs-U classifiers of every halving
    (each trained twice) and aaPU at the profile's epochs and sizes — not the paper's."""
    from pusupport.apps.own import OWN_DATA, SPLITS
    from pusupport.book.experiments.own_data import EXPERIMENT
    for profile in ("cpu", "paper"):
        runs = EXPERIMENT.runs(profile=profile, device="cpu").runs
        aapu = next(r for r in runs if r.label == "aapu")
        estimator = next(r for r in runs if r.cfg.method == "pn")
        assert estimator.cfg.epochs == 2 * SPLITS * 10 and estimator.sizes.n_p == 250  # half of P
        assert aapu.cfg.epochs == {**OWN_DATA["paper"]["train"], **OWN_DATA[profile].get("train", {})}["epochs"]
        assert aapu.sizes.n_u == (OWN_DATA[profile].get("data", {}).get("n_unlabeled") or 50_000)


def test_a_profile_s_test_size_draws_the_test_split_once_and_keeps_a_smaller_one_whole(tmp_path):
    """At `smoke` the page scores at most 1,000 test rows, as the real-data pages' smoke does
    (the example's 10,000 CIFAR-10 test images took three scorings of 16 s): one seeded draw
    for every seed, a smaller split whole, and the cost line prices it."""
    import pandas as pd
    from pusupport.apps.own import build_problem
    from pusupport.apps.reading import load_own
    from pusupport.book.experiments.own_data import EXPERIMENT
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=300), "label": np.arange(300) % 3}).to_csv(tmp_path / "t.csv", index=False)
    mine = load_own(features=tmp_path / "t.csv")
    whole = mine.labeled.x_test
    assert len(whole) == 60                                   # a fifth held out
    drawn = [build_problem(mine, [2], 20, seed, clip=True, n_test=25) for seed in (0, 1)]
    assert torch.equal(drawn[0].x_test, drawn[1].x_test) and len(drawn[0].x_test) == 25
    assert all(any(torch.equal(row, w) for w in whole) for row in drawn[0].x_test)
    assert torch.equal(build_problem(mine, [2], 20, clip=True, n_test=1000).x_test, whole)
    assert torch.equal(build_problem(mine, [2], 20).x_test, whole)
    with pytest.raises(ValueError, match="the test split has only 60 rows; set data.n_test"):
        build_problem(mine, [2], 20, n_test=1000)
    for profile, n_test in (("smoke", 1000), ("cpu", 10_000)):
        aapu = next(r for r in EXPERIMENT.runs(profile=profile, device="cpu").runs if r.label == "aapu")
        assert aapu.sizes.n_test == n_test, profile


def test_the_own_data_plan_prices_the_page_s_method_and_only_the_estimate_it_needs():
    """The method and π the page is given reach its plan (its cost line, its dry run): no
    P-vs-U classifiers for a method that reads no π or where π is given; a recipe that
    stops early priced at twice its epochs (it may train again to its stop)."""
    from pusupport.book.experiments.own_data import EXPERIMENT
    from pusupport.book.pages import resolve_page

    def runs(**given):
        return {r.label: r.cfg for r in EXPERIMENT.runs(profile="cpu", device="cpu", parameters=given).runs}
    assert set(runs()) == {"P-vs-U classifiers", "aapu"}
    assert set(runs(method="vpu")) == {"vpu"} and runs(method="vpu")["vpu"].method == "vpu"
    assert set(runs(method="nnpu", prior=0.4)) == {"nnpu"}
    assert runs(method="robustpu")["robustpu"].epochs == 2 * runs()["aapu"].epochs
    kw = dict(profile="cpu", device="cpu", seeds=None, data_dir=None, output_dir="results",
              dry_run=0, checkpoints=None, runner=None, image_folder=None, features="t.csv",
              label_column=None, positive_classes=[1], image_size=None, model=None,
              n_labeled=None, epochs=None, lr=None)
    page, given = resolve_page("own_data", method="vpu", prior=None, **kw), resolve_page(
        "own_data", method=None, prior=0.3, **kw)
    assert [r.label for r in page.plan()] == ["vpu"] and [r.label for r in given.plan()] == ["aapu"]
    assert page.settings == given.settings                # choices of the page, not settings


def test_what_the_reader_sets_on_the_page_wins_over_the_small_data_rules():
    from pusupport.apps import own
    from pusupport.book.experiments.own_data import own_data_settings
    from pusupport.book.pages import resolve_page
    from pusupport.core.config import ModelConfig
    kw = dict(profile="smoke", device="cpu", seeds=None, data_dir=None, output_dir="results",
              dry_run=0, checkpoints=None, runner=None, image_folder=None, features="t.csv",
              label_column=None, positive_classes=[1], image_size=None, prior=None, model=None,
              n_labeled=None, method=None)
    s = own_data_settings(resolve_page("own_data", epochs=7, lr=2e-5, **kw))
    assert s["given"] == {"epochs": 7, "lr": 2e-5}
    small = own.train_config(200, ModelConfig(), base=s["train"], **s["given"])   # a small U
    assert small.lr == 2e-5 and small.epochs == 7 and small.batch_size < s["train"].batch_size
    default = own.train_config(200, ModelConfig(), base=s["train"])
    assert default.lr == own.SMALL_LR                       # the rule, where nothing was set
    assert own_data_settings(resolve_page("own_data", epochs=None, lr=None, **kw))["given"] == {}


def test_small_data_lower_the_rate_tenfold_for_the_last_fifth_unless_a_schedule_is_given():
    from pusupport.apps import own
    from pusupport.core.config import ModelConfig
    small = own.train_config(300, ModelConfig())                     # a tenth of U: batch 30
    assert small.batch_size == 30 and small.lr == own.SMALL_LR and small.epochs == 50
    assert small.lr_schedule == {40: own.SMALL_LR / 10}
    assert [small.lr_at(e) for e in (40, 41, 50)] == [own.SMALL_LR, own.SMALL_LR / 10, own.SMALL_LR / 10]
    assert own.train_config(300, ModelConfig(), lr=5e-4).lr_schedule == {40: 5e-5}
    assert own.train_config(300, ModelConfig(), lr_schedule={}).lr_schedule == {}      # given: kept
    assert own.train_config(100_000, ModelConfig()).lr_schedule == {}                  # large U
    assert own.train_config(100_000, ModelConfig(), batch_size=32).lr_schedule == {}   # a choice


def test_a_folder_without_train_and_test_says_which_is_missing(tmp_path):
    from pusupport.data.files import DatasetNotFoundError
    (tmp_path / "train" / "cat").mkdir(parents=True)
    with pytest.raises(DatasetNotFoundError, match=f"test/ inside image folder {tmp_path} was not found"):
        load_image_folder(tmp_path)
    with pytest.raises(DatasetNotFoundError, match="^image folder .*nope was not found"):
        load_image_folder(tmp_path / "nope")
