"""posenc.grid_experiment: the task, the model, a reduced study end to end, the committed file."""

from __future__ import annotations

import json

import pytest
import torch

from posenc.grid_experiment import (
    FULL,
    QUICK,
    RESULTS_PATH,
    SCHEMES,
    GridAttention,
    GridConfig,
    load_results,
    main,
    make_grid_batch,
    run_study,
    save_results,
    summarize,
)


def test_batch_targets_are_the_patch_below():
    tokens, targets, mask = make_grid_batch(3, (4, 5), torch.Generator().manual_seed(0),
                                            vocab_size=7)
    assert tokens.shape == targets.shape == mask.shape == (3, 20)
    grid_t, grid_y = tokens.reshape(3, 4, 5), targets.reshape(3, 4, 5)
    assert torch.equal(grid_y[:, :-1], grid_t[:, 1:])
    assert mask.reshape(3, 4, 5)[:, :-1].all() and not mask.reshape(3, 4, 5)[:, -1].any()
    assert int(tokens.max()) < 7


@pytest.mark.parametrize(
    ("args", "err"),
    [((0, (4, 4)), ValueError), ((2, (0, 4)), ValueError), ((2, (4, 2.5)), TypeError)],
)
def test_batch_bad_input(args, err):
    with pytest.raises(err):
        make_grid_batch(*args, torch.Generator())


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("grid", [(8, 8), (5, 11)])
def test_model_shapes_and_shared_initial_weights(scheme, grid):
    cfg = GridConfig()
    torch.manual_seed(0)
    model = GridAttention(scheme, cfg)
    torch.manual_seed(0)
    other = GridAttention("axial_rope", cfg)
    for name in ("embed.weight", "const", "q.weight", "k.weight", "v.weight", "out.weight"):
        assert torch.equal(model.state_dict()[name], other.state_dict()[name]), name
    tokens = torch.randint(0, cfg.vocab_size, (2, grid[0] * grid[1]))
    assert model(tokens, grid).shape == (2, grid[0] * grid[1], cfg.vocab_size)


def test_learned_table_is_resized_bilinearly():
    torch.manual_seed(0)
    model = GridAttention("learned_2d", GridConfig())
    assert model.position_table((8, 8)) is model.table
    big = model.position_table((16, 16))
    assert big.shape == (16, 16, 32)
    # bilinear resizing keeps a constant table constant
    with torch.no_grad():
        model.table.fill_(0.5)
    assert torch.allclose(model.position_table((12, 12)), torch.full((12, 12, 32), 0.5))


def test_unknown_scheme():
    with pytest.raises(ValueError, match="scheme"):
        GridAttention("alibi", GridConfig())


def test_quick_study_is_deterministic(tmp_path):
    a, b = run_study(QUICK), run_study(QUICK)
    assert a == b
    n_rows = len(SCHEMES) * len(QUICK.seeds) * len(QUICK.test_grids)
    assert len(a["results"]) == n_rows
    assert len(a["budget_check"]) == len(QUICK.test_grids)
    assert {r["steps"] for r in a["budget_check"]} == {60}
    for r in a["results"] + a["budget_check"]:
        assert 0.0 <= r["accuracy"] <= 1.0 and r["loss"] > 0
    save_results(a, tmp_path / "q.json")
    assert load_results(tmp_path / "q.json") == json.loads(json.dumps(a))
    s = summarize(a)
    assert set(s) == set(SCHEMES) and set(s["axial_rope"]) == {"8x8", "16x16"}


def test_quick_never_overwrites_committed_results(tmp_path):
    with pytest.raises(SystemExit):
        main(["--quick"])
    with pytest.raises(SystemExit):
        main(["--quick", "--out", str(RESULTS_PATH)])


def test_bad_budget_check_and_summary():
    with pytest.raises(ValueError, match="budget_check scheme"):
        run_study(GridConfig(budget_check=(("nope", 10),)))
    with pytest.raises(ValueError, match="budget_check steps"):
        run_study(GridConfig(budget_check=(("axial_rope", 0),)))
    with pytest.raises(ValueError, match="metric"):
        summarize({"results": []}, "bits")
    with pytest.raises(ValueError, match="part"):
        summarize({"results": []}, part="training")
    with pytest.raises(ValueError, match="results"):
        summarize({})


def test_committed_results_match_full_config_and_the_chapter():
    study = load_results()
    assert study["config"] == FULL.to_dict()
    s = summarize(study)
    chance = 1 / FULL.vocab_size
    for grid in ("8x8", "12x12", "16x16"):
        assert s["axial_rope"][grid][1] >= 0.99  # every seed, every grid
    assert s["raster_rope"]["8x8"][1] >= 0.99
    assert s["raster_rope"]["16x16"][2] < 2 * chance
    budget = summarize(study, part="budget_check")
    assert budget["learned_2d"]["8x8"][1] >= 0.99  # learned the task with more steps ...
    assert budget["learned_2d"]["16x16"][2] < 2 * chance  # ... and still fails at 16 x 16
    # The ALiBi arms (chapter 11's verdict): 1-D on the raster index stays near chance on
    # every grid; the 2-D distance bias learns part of the task and keeps it on larger
    # grids, below what a bias that cannot tell "below" from "above" allows.
    assert set(s) == set(SCHEMES)
    for grid in ("8x8", "12x12", "16x16"):
        assert s["alibi_1d"][grid][2] < 1.5 * chance
        assert 0.3 < s["alibi_2d"][grid][1] and s["alibi_2d"][grid][2] < 0.5
    assert s["alibi_2d"]["8x8"][0] - s["alibi_2d"]["16x16"][0] < 0.05
    for grid in ("8x8", "12x12", "16x16"):  # RoPE-Mixed: relative, like axial RoPE
        assert s["mixed_rope"][grid][1] >= 0.99


def test_mixed_rope_learns_its_frequency_vectors():
    from posenc.rope_mixed import mixed_inv_freq

    torch.manual_seed(0)
    model = GridAttention("mixed_rope", GridConfig())
    assert model.mixed_freqs.requires_grad and model.mixed_freqs.shape == (16, 2)
    # the reference initialisation: magnitudes 10^(-4j/32), two orthogonal directions
    norms = model.mixed_freqs.detach().norm(dim=-1)
    torch.testing.assert_close(norms, mixed_inv_freq(32, angle=0.3).norm(dim=-1))


def test_alibi_distances():
    from posenc.alibi import alibi_bias

    torch.manual_seed(0)
    one_d = GridAttention("alibi_1d", GridConfig())
    assert torch.equal(-0.25 * one_d.distances((3, 5)).double(),
                       alibi_bias(1, 15, causal=False, slopes=[0.25])[0].double())
    two_d = GridAttention("alibi_2d", GridConfig()).distances((3, 5))
    h, w = torch.arange(15) // 5, torch.arange(15) % 5
    ref = (h[:, None] - h[None]).abs() + (w[:, None] - w[None]).abs()
    assert torch.equal(two_d, ref.float())
    # symmetric: the patch below and the patch above get the same penalty
    assert torch.equal(two_d, two_d.T) and two_d[7, 12] == two_d[7, 2] == 1
    assert GridAttention("alibi_2d", GridConfig()).log_slope.item() == 0.0  # m = 1
    with pytest.raises(ValueError, match="distance"):
        GridAttention("axial_rope", GridConfig()).distances((3, 5))
