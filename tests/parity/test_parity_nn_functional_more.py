"""The nn modules of the functional ops PyTorch's OpInfo database checks one by one
(test_parity_opinfo.py): channel-wise and alpha dropout, Softmin, pixel and channel
shuffles, the padding layers; and pad's errors that OpInfo lists none of. Values
(dropout's masks bit for bit after the same seed), gradients, nodes, saved values,
versions, reprs and errors against PyTorch."""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_bad_input import compare
from test_parity_joining_statistics import _leaf


def _seeded(make):
    def program(c):
        c.m.manual_seed(5)
        return make(c)
    return program


MODULES = {
    "Dropout1d": lambda c: c.m.nn.Dropout1d(0.4)(_leaf(c, 3, 4, 5)),
    "Dropout1d unbatched": lambda c: c.m.nn.Dropout1d(0.4)(_leaf(c, 4, 5)),
    "Dropout2d": lambda c: c.m.nn.Dropout2d(0.3)(_leaf(c, 2, 5, 3, 3)),
    "Dropout3d float32": lambda c: c.m.nn.Dropout3d()(_leaf(c, 2, 3, 2, 2, 2, dtype="float32")),
    "Dropout2d eval": lambda c: c.m.nn.Dropout2d(0.3).eval()(_leaf(c, 2, 5, 3, 3)),
    "Dropout2d in place": lambda c: c.m.nn.Dropout2d(0.5, inplace=True)(
        c.keep(_leaf(c, 2, 6, 2, 2) * 1)),
    "AlphaDropout": lambda c: c.m.nn.AlphaDropout(0.2)(_leaf(c, 6, 7)),
    "FeatureAlphaDropout float32": lambda c: c.m.nn.FeatureAlphaDropout(0.6)(
        _leaf(c, 3, 8, 2, dtype="float32")),
    "GLU over the last dim (saved as PyTorch saves -1)": lambda c: c.m.nn.GLU()(
        _leaf(c, 3, 4)),
    "F.max_pool1d with indices": lambda c: c.m.nn.functional.max_pool1d(
        _leaf(c, 2, 3, 7), 3, 2, 1, return_indices=True),
    "GLU": lambda c: c.m.nn.GLU(1)(_leaf(c, 3, 4, 2)),
    "GLU, then its double backward": lambda c: c.m.autograd.grad(
        (c.m.nn.GLU()(c.keep(_leaf(c, 2, 4))) ** 2).sum(), c.kept[-1], create_graph=True),
    "Softmin": lambda c: c.m.nn.Softmin(1)(_leaf(c, 3, 4)),
    "PixelShuffle": lambda c: c.m.nn.PixelShuffle(2)(_leaf(c, 2, 8, 3, 2)),
    "PixelUnshuffle": lambda c: c.m.nn.PixelUnshuffle(2)(_leaf(c, 1, 2, 4, 6)),
    "ChannelShuffle": lambda c: c.m.nn.ChannelShuffle(3)(_leaf(c, 2, 6, 2)),
    "ConstantPad2d": lambda c: c.m.nn.ConstantPad2d((1, 0, 2, -1), 0.5)(_leaf(c, 2, 3, 4)),
    "ZeroPad1d": lambda c: c.m.nn.ZeroPad1d(2)(_leaf(c, 2, 3)),
    "ReflectionPad2d": lambda c: c.m.nn.ReflectionPad2d((2, 1, 0, 2))(_leaf(c, 1, 2, 3, 4)),
    "ReplicationPad3d": lambda c: c.m.nn.ReplicationPad3d(1)(_leaf(c, 1, 2, 2, 2, 3)),
    "MarginRankingLoss": lambda c: c.m.nn.MarginRankingLoss(0.3)(
        _leaf(c, 6), _leaf(c, 6, shift=0.5), c.leaf([1.0, -1, 1, 1, -1, -1])),
    "HingeEmbeddingLoss, none": lambda c: c.m.nn.HingeEmbeddingLoss(reduction="none")(
        _leaf(c, 2, 3), c.leaf([[1.0, -1, 1], [-1, -1, 1]])),
    "CosineEmbeddingLoss": lambda c: c.m.nn.CosineEmbeddingLoss(0.1)(
        _leaf(c, 3, 4), _leaf(c, 3, 4, shift=0.7), c.leaf([1.0, -1, -1])),
    "PoissonNLLLoss full": lambda c: c.m.nn.PoissonNLLLoss(log_input=False, full=True)(
        _leaf(c, 2, 3).abs(), c.leaf([[0.0, 1, 2], [3, 4, 0.5]])),
    "GaussianNLLLoss, sum": lambda c: c.m.nn.GaussianNLLLoss(reduction="sum")(
        _leaf(c, 2, 3), _leaf(c, 2, 3, shift=0.2), _leaf(c, 2).abs()),
    "PairwiseDistance p=3 keepdim": lambda c: c.m.nn.PairwiseDistance(3.0, keepdim=True)(
        _leaf(c, 3, 4), _leaf(c, 3, 4, shift=0.4)),
    "CosineSimilarity, broadcast": lambda c: c.m.nn.CosineSimilarity(dim=-1)(
        _leaf(c, 3, 4), _leaf(c, 4, shift=0.4)),
    "F.normalize p=1": lambda c: c.m.nn.functional.normalize(_leaf(c, 3, 4), 1.0, 0),
    "TripletMarginLoss swap": lambda c: c.m.nn.TripletMarginLoss(swap=True, p=1.0)(
        _leaf(c, 3, 4), _leaf(c, 3, 4, shift=0.4), _leaf(c, 3, 4, shift=0.9)),
    "TripletMarginWithDistanceLoss": lambda c: c.m.nn.TripletMarginWithDistanceLoss(
        distance_function=c.m.nn.CosineSimilarity(), margin=0.5)(
        _leaf(c, 3, 4), _leaf(c, 3, 4, shift=0.4), _leaf(c, 3, 4, shift=0.9)),
    "SoftMarginLoss, sum": lambda c: c.m.nn.SoftMarginLoss(reduction="sum")(
        _leaf(c, 2, 3), c.leaf([[1.0, -1, 1], [-1, -1, 1]], requires_grad=False)),
    "soft_margin_loss, then its double backward": lambda c: c.m.autograd.grad(
        c.m.nn.functional.soft_margin_loss(c.keep(_leaf(c, 4)), c.leaf(
            [1.0, -1, 1, -1], requires_grad=False)), c.kept[-1], create_graph=True),
    "F.avg_pool1d": lambda c: c.m.nn.functional.avg_pool1d(_leaf(c, 2, 3, 7), 3, 2, 1,
                                                            ceil_mode=True),
    "AdaptiveAvgPool2d": lambda c: c.m.nn.AdaptiveAvgPool2d((2, 3))(_leaf(c, 2, 2, 5, 4)),
    "AdaptiveAvgPool2d 1 x 1 is a mean": lambda c: c.m.nn.AdaptiveAvgPool2d(1)(
        _leaf(c, 2, 3, 3)),
    "AdaptiveAvgPool1d": lambda c: c.m.nn.AdaptiveAvgPool1d(3)(_leaf(c, 2, 7)),
    "AvgPool1d": lambda c: c.m.nn.AvgPool1d(3, 2, 1, count_include_pad=False)(
        _leaf(c, 2, 7)),
    "adaptive_avg_pool2d, then its double backward": lambda c: c.m.autograd.grad(
        (c.m.nn.functional.adaptive_avg_pool2d(c.keep(_leaf(c, 1, 5, 5)), 3) ** 2).sum(),
        c.kept[-1], create_graph=True),
    "ReflectionPad1d, then its double backward": lambda c: c.m.autograd.grad(
        (c.m.nn.ReflectionPad1d(2)(c.keep(_leaf(c, 2, 4))) ** 2).sum(), c.kept[-1],
        create_graph=True),
    "CircularPad1d": lambda c: c.m.nn.CircularPad1d((2, 1))(_leaf(c, 2, 4)),
    "CircularPad2d, then its double backward": lambda c: c.m.autograd.grad(
        (c.m.nn.CircularPad2d((1, 0, 2, 1))(c.keep(_leaf(c, 1, 3, 4))) ** 2).sum(),
        c.kept[-1], create_graph=True),
    "CircularPad3d": lambda c: c.m.nn.CircularPad3d(1)(_leaf(c, 1, 2, 2, 3)),
}


@pytest.mark.parametrize("case", list(MODULES))
def test_modules(torch, case):
    check(torch, _seeded(MODULES[case]))


REPRS = ("[repr(m) for m in (torch.nn.Dropout1d(), torch.nn.AlphaDropout(0.1), "
         "torch.nn.FeatureAlphaDropout(0.2, True), torch.nn.Softmin(0), "
         "torch.nn.PixelShuffle(3), torch.nn.PixelUnshuffle(2), torch.nn.ChannelShuffle(4), "
         "torch.nn.ConstantPad1d(2, 0.5), torch.nn.ZeroPad2d((1, 2, 3, 4)), "
         "torch.nn.ReflectionPad3d(1), torch.nn.ReplicationPad1d((0, 2)), torch.nn.GLU(), "
         "torch.nn.CircularPad2d((1, 0, 2, 1)), torch.nn.CircularPad1d(2))]")

X = "x = torch.ones(2, 3, 4)\n"
ERRORS = {
    "reprs": REPRS,
    "pad: odd length": X + "torch.nn.functional.pad(x, (1,))",
    "pad: too long": X + "torch.nn.functional.pad(x, (1,) * 8)",
    "pad: unknown mode": X + "torch.nn.functional.pad(x, (1, 1), mode='foo')",
    "pad: a value for reflect": X + "torch.nn.functional.pad(x, (1, 1), 'reflect', 1.0)",
    "pad: a float amount": X + "torch.nn.functional.pad(x, [1.5, 1])",
    "pad: reflect by the size": X + "torch.nn.functional.pad(x, (4, 1), 'reflect')",
    "pad: reflect 2-D by the height": X + "torch.nn.functional.pad(x, (1, 1, 0, 3), 'reflect')",
    "pad: reflect 1-D input": X + "torch.nn.functional.pad(x[0, 0], (1, 1), 'reflect')",
    "pad: replicate 3 dims of 3-D input": X + "torch.nn.functional.pad(x, (1,) * 6, 'replicate')",
    "pad: replicate an empty dim": X + "torch.nn.functional.pad(x[:, :0], (1, 1), 'replicate')",
    "pad: replicate to nothing": X + "torch.nn.functional.pad(x, (-2, -3), 'replicate')",
    "CircularPad1d: wraps more than once": X + "torch.nn.CircularPad1d(5)(x)",
    "pad: crop past the size": X + "torch.nn.functional.pad(x, (-5, 2))",
    "pad: constant of an int tensor": X + "torch.nn.functional.pad(x.long(), (1, 1), value=1.5)",
    "margin_ranking_loss: dims differ": "torch.nn.functional.margin_ranking_loss("
                                         "torch.ones(2, 3), torch.ones(2, 3), torch.ones(2))",
    "cosine_embedding_loss: 2-D target": "torch.nn.functional.cosine_embedding_loss("
                                         "torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 1))",
    "cosine_embedding_loss: 1-D target, 1-D inputs": "torch.nn.functional."
        "cosine_embedding_loss(torch.ones(3), torch.ones(3), torch.ones(2))",
    "gaussian_nll_loss: negative var": "torch.nn.functional.gaussian_nll_loss("
                                       "torch.ones(2), torch.ones(2), -torch.ones(2))",
    "hinge_embedding_loss: bad reduction": "torch.nn.functional.hinge_embedding_loss("
                                           "torch.ones(2), torch.ones(2), reduction='x')",
    "TripletMarginLoss: margin 0": "torch.nn.TripletMarginLoss(margin=0.0)",
    "cosine_similarity: integers": "torch.nn.functional.cosine_similarity("
                                   "torch.ones(2, 3).long(), torch.ones(2, 3).long())",
    "soft_margin_loss: a target that requires grad": "torch.nn.functional.soft_margin_loss("
        "torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True))",
    "soft_margin_loss: a target larger than the input": "torch.nn.functional."
        "soft_margin_loss(torch.ones(3, 1), torch.ones(3))",
    "avg_pool1d: 1-D input": "torch.avg_pool1d(torch.ones(3), 3)",
    "avg_pool1d: two kernel sizes": "torch.avg_pool1d(torch.ones(2, 3), (3, 3))",
    "avg_pool1d: a float kernel size": "torch.avg_pool1d(torch.ones(2, 3), 1.5)",
    "avg_pool1d: too large a window": "torch.avg_pool1d(torch.ones(2, 3), 5)",
    "max_pool1d: two kernel sizes": "torch.nn.functional.max_pool1d(torch.ones(2, 3), (2, 2))",
    "max_pool1d: padding over half": "torch.nn.functional.max_pool1d(torch.ones(2, 3), 3, 1, 2)",
    "one_hot: float input": "torch.nn.functional.one_hot(torch.tensor([1.0]))",
    "one_hot: negative class": "torch.nn.functional.one_hot(torch.tensor([-1, 2]))",
    "one_hot: class too large": "torch.nn.functional.one_hot(torch.tensor([1, 2]), 2)",
    "one_hot: empty": "torch.nn.functional.one_hot(torch.tensor([], dtype=torch.int64))",
    "dropout1d: 4-D input": "torch.nn.functional.dropout1d(torch.ones(1, 2, 3, 4))",
    "dropout2d: 1-D input": "torch.nn.functional.dropout2d(torch.ones(3))",
    "dropout2d: p > 1": "torch.nn.functional.dropout2d(torch.ones(2, 3, 4), 1.5)",
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_and_reprs(torch, case):
    compare(torch, ERRORS[case])
