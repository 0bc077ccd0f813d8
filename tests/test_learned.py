"""posenc.learned: the lookup table, its hard limit, and interpolation."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.learned import LearnedPositionalEmbedding


def test_parameter_count_bert_base():
    table = LearnedPositionalEmbedding(512, 768)
    assert sum(p.numel() for p in table.parameters()) == 512 * 768 == 393_216


def test_lookup_is_row_indexing():
    torch.manual_seed(0)
    table = LearnedPositionalEmbedding(10, 4)
    pos = torch.tensor([[0, 3], [9, 3]])
    torch.testing.assert_close(table(pos), table.weight[pos])
    torch.testing.assert_close(table.for_length(3, offset=2), table.weight[2:5])


def test_gradient_reaches_only_used_rows():
    table = LearnedPositionalEmbedding(8, 3)
    table.for_length(3).sum().backward()
    used = table.weight.grad.abs().sum(dim=1) > 0
    assert used.tolist() == [True] * 3 + [False] * 5


def test_clip_sized_table_takes_77_refuses_78():
    table = LearnedPositionalEmbedding(77, 16)
    assert table.for_length(77).shape == (77, 16)
    with pytest.raises(IndexError, match=r"max_position_embeddings=77 allows positions 0\.\.76"):
        table.for_length(78)
    with pytest.raises(IndexError, match="position 77 is past the end"):
        table(torch.tensor([5, 77]))


def test_error_raised_before_indexing(monkeypatch):
    table = LearnedPositionalEmbedding(4, 2)
    called = []
    monkeypatch.setattr(torch.nn.functional, "embedding", lambda *a, **k: called.append(1))
    with pytest.raises(IndexError):
        table(torch.tensor([4]))
    assert not called


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((0, 8), {}, ValueError, "max_position_embeddings must be an integer >= 1"),
        ((8, 0), {}, ValueError, "dim must be an integer >= 1"),
        ((8.0, 8), {}, TypeError, "max_position_embeddings must be an integer"),
        ((8, 8), {"init_std": -1.0}, ValueError, "init_std must be >= 0"),
    ],
)
def test_bad_constructor(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        LearnedPositionalEmbedding(*args, **kwargs)


def test_bad_positions():
    table = LearnedPositionalEmbedding(8, 2)
    with pytest.raises(ValueError, match="must be >= 0"):
        table(torch.tensor([-1]))
    with pytest.raises(ValueError, match="whole numbers"):
        table(torch.tensor([1.5]))
    with pytest.raises(ValueError, match="seq_len must be an integer >= 0"):
        table.for_length(-2)


def test_interpolate_keeps_ends_and_mixes_neighbours():
    torch.manual_seed(0)
    table = LearnedPositionalEmbedding(5, 3)
    big = table.interpolate(9)  # doubles the resolution: new row 2j is old row j
    assert big.max_position_embeddings == 9
    torch.testing.assert_close(big.weight[0::2], table.weight, rtol=0, atol=1e-6)
    torch.testing.assert_close(
        big.weight[1::2], (table.weight[:-1] + table.weight[1:]) / 2, rtol=0, atol=1e-6
    )
    assert big.weight.requires_grad and table.max_position_embeddings == 5


@settings(max_examples=25, deadline=None)
@given(old=st.integers(2, 40), new=st.integers(2, 200))
def test_interpolated_rows_are_convex_mixtures(old, new):
    torch.manual_seed(old * 1000 + new)
    table = LearnedPositionalEmbedding(old, 4)
    out = table.interpolate(new).weight.detach()
    lo = table.weight.detach().min(dim=0).values - 1e-6
    hi = table.weight.detach().max(dim=0).values + 1e-6
    assert ((out >= lo) & (out <= hi)).all()
    torch.testing.assert_close(out[[0, -1]], table.weight.detach()[[0, -1]], rtol=0, atol=1e-6)


def test_interpolate_bad_input():
    with pytest.raises(ValueError, match="new_max must be an integer >= 2"):
        LearnedPositionalEmbedding(8, 2).interpolate(1)
    with pytest.raises(ValueError, match="max_position_embeddings >= 2"):
        LearnedPositionalEmbedding(1, 2).interpolate(4)
