"""The paper's architectures: exact parameter counts and output shapes."""
import pytest
import torch

from pusupport.core.models import SparseLinear, build_model


def n_params(model):
    return sum(p.numel() for p in model.parameters())


def bn(c):        # BatchNorm weight + bias
    return 2 * c


def conv(ci, co, k=3):
    return ci * co * k * k + co + bn(co)


def test_synthetic_mlp():
    m = build_model("mlp")
    assert n_params(m) == (2 * 200 + 200 + bn(200)) + (200 * 600 + 600 + bn(600)) + (600 + 1)
    assert m(torch.randn(7, 2)).shape == (7,)


def test_kiryo_cnn():
    m = build_model("kiryo_cnn", dropout=0.5)
    convs = (conv(3, 96) + 2 * conv(96, 96) + conv(96, 192) + 3 * conv(192, 192)
             + conv(192, 192, 1) + conv(192, 10, 1))
    fcs = (640 * 1000 + 1000) + (1000 * 1000 + 1000) + (1000 + 1)
    assert n_params(m) == convs + fcs
    assert sum(isinstance(x, torch.nn.Dropout) and x.p == 0.5 for x in m.modules()) == 3
    assert m.eval()(torch.rand(3, 3, 32, 32)).shape == (3,)


def test_coteaching_cnn_has_han_et_al_s_dropout_only():
    """The CIFAR-100 network: Dropout2d at the configured rate after each pooling, and no
    other dropout layer (the paper's "dropout parameter 0.5" is Han et al.'s dropout_rate)."""
    for rate in (0.25, 0.5):
        m = build_model("coteaching_cnn", dropout=rate)
        dropouts = [l for l in m.modules() if isinstance(l, (torch.nn.Dropout, torch.nn.Dropout2d))]
        assert [type(l) for l in dropouts] == [torch.nn.Dropout2d] * 2
        assert [l.p for l in dropouts] == [rate, rate]
        layers = m.layers()
        assert all(isinstance(layers[layers.index(d) - 1], torch.nn.MaxPool2d) for d in dropouts)


def test_coteaching_cnn_and_dropout_off_in_eval():
    m = build_model("coteaching_cnn", dropout=0.5)
    convs = (conv(3, 128) + 2 * conv(128, 128) + conv(128, 256) + 2 * conv(256, 256)
             + conv(256, 512) + conv(512, 256) + conv(256, 128))
    assert n_params(m) == convs + 128 + 1
    x = torch.rand(2, 3, 32, 32)
    m.eval()
    assert m(x).shape == (2,)
    out = m(x)
    for layer in m.modules():                      # dropout that would zero nearly everything …
        if isinstance(layer, (torch.nn.Dropout, torch.nn.Dropout2d)):
            layer.p = 0.99
    assert torch.equal(m(x), out)                  # … is off in eval mode (Han et al.'s code keeps it on)
    m.train()
    torch.manual_seed(0)
    noisy = m(x)
    for layer in m.modules():
        if isinstance(layer, (torch.nn.Dropout, torch.nn.Dropout2d)):
            layer.p = 0.0
    torch.manual_seed(0)
    assert not torch.allclose(m(x), noisy)         # and on in training mode


@pytest.mark.parametrize("activation", ["softsign", "relu"])
def test_news_mlp_dense_and_sparse(activation):
    d = 50
    m = build_model("news_mlp", in_features=d, activation=activation).eval()
    assert n_params(m) == d * 300 + 2 * 300 * 300 + 3 * bn(300) + 300 + 1
    assert not any(l.bias is not None for l in list(m.modules())[1:] if isinstance(l, torch.nn.Linear)
                   and l.out_features == 300)
    x = torch.rand(4, d) * (torch.rand(4, d) > 0.8)
    assert torch.allclose(m(x), m(x.to_sparse()), atol=1e-6)
    assert torch.allclose(m(x), m(x.to_sparse_csr()), atol=1e-6)


def test_sparse_first_layer_matches_the_dense_product_with_its_gradient():
    """The embedding-bag (CSR) and sparse.mm (COO) paths give x·Wᵀ and its gradient in
    float64, as nn.Linear does; state dicts hold nn.Linear's (out, in) weight."""
    torch.manual_seed(0)
    layer = SparseLinear(40, 7, bias=True).double()
    x = torch.rand(5, 40, dtype=torch.float64) * (torch.rand(5, 40) > 0.7)
    x[2] = 0.0                                          # an empty document
    dense = torch.nn.functional.linear(x, layer.weight, layer.bias)
    g_dense = torch.autograd.grad(dense.square().sum(), layer.weight_t)[0]
    for sparse in (x.to_sparse_csr(), x.to_sparse()):
        out = layer(sparse)
        assert out.dtype == torch.float64 and torch.allclose(out, dense, atol=1e-12)
        g = torch.autograd.grad(out.square().sum(), layer.weight_t)[0]
        assert torch.allclose(g, g_dense, atol=1e-12)
    state = layer.state_dict()
    assert sorted(state) == ["bias", "weight"] and state["weight"].shape == (7, 40)
    other = SparseLinear(40, 7, bias=True).double()
    other.load_state_dict(state)
    assert torch.equal(other(x), layer(x)) and other.weight_t.is_contiguous()


def test_width_scales_hidden_sizes():
    assert n_params(build_model("kiryo_cnn", width=0.25)) < n_params(build_model("kiryo_cnn")) / 5
    assert build_model("kiryo_cnn", width=0.25)(torch.rand(2, 3, 32, 32)).shape == (2,)


def test_unknown_names_are_rejected():
    with pytest.raises(ValueError, match="unknown model 'resnet'"):
        build_model("resnet")
    with pytest.raises(ValueError, match="unknown activation"):
        build_model("news_mlp", in_features=3, activation="tanh")
