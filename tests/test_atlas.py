"""The atlas (``book/atlas.md``): its row functions on hand-made configs, and the page.

The summaries of :mod:`posenc.hf_config.summary` and the row functions of
:mod:`booktools.atlas` (the page renderer, ``tools/booktools/``) are checked on small configs whose
answer is known by construction (a Gemma-3-like 5 : 1 sliding stack, a Qwen3-Next-like
3 : 1 linear stack, SmolLM3-like NoPE flags, an MLA head, a refused family). The page
test regenerates the atlas in memory from the pinned ``transformers`` (as
``scripts/build_atlas.py`` does) and fails when the committed file differs.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from conftest import ROOT

from booktools import atlas
from posenc.hf_config import summary
from posenc.hf_config.families import FAMILIES

PAGE = ROOT / "book" / "atlas.md"


def _gemma3_like(n=26):
    return {
        "model_type": "gemma3_text", "num_hidden_layers": n, "hidden_size": 64,
        "num_attention_heads": 2, "head_dim": 32, "sliding_window": 512,
        "sliding_window_pattern": 6, "rope_theta": 1_000_000.0,
        "rope_local_base_freq": 10_000.0,
    }


def _qwen3_next_like(n=48):
    return {
        "model_type": "qwen3_next", "num_hidden_layers": n, "hidden_size": 64,
        "num_attention_heads": 2, "head_dim": 64, "full_attention_interval": 4,
        "partial_rotary_factor": 0.25, "rope_theta": 10_000.0,
    }


# ----------------------------------------------------------------- layer patterns ----

@pytest.mark.parametrize("types, expected", [
    (["full_attention"] * 4, "all full (4 layers)"),
    ((["sliding_attention"] * 5 + ["full_attention"]) * 4 + ["sliding_attention"] * 2,
     "5 sliding : 1 full (26 layers)"),
    ((["linear_attention"] * 3 + ["full_attention"]) * 12, "3 linear : 1 full (48 layers)"),
    (["full_attention", "linear_attention"] * 16, "1 full : 1 linear (32 layers)"),
    # the unit does not start at a block boundary: its initials say where full layers are
    (["sliding_attention", "full_attention", "sliding_attention", "sliding_attention"] * 3,
     "3 sliding : 1 full (12 layers, unit S F S S)"),
    # only the last layer breaks the repeat (Gemma 4's config class forces it full)
    ((["sliding_attention"] * 5 + ["full_attention"]) * 5 + ["sliding_attention"] * 4
     + ["full_attention"], "5 sliding : 1 full (35 layers, last layer full)"),
    (["full_attention"] + ["sliding_attention"] * 3 + ["full_attention"]
     + ["sliding_attention"] * 5,
     "irregular (10 layers): 2 full, 8 sliding; full at 0, 4"),
])
def test_layer_pattern(types, expected):
    assert summary.layer_pattern(types) == expected


def test_period_is_the_shortest_repeating_unit():
    assert summary.period(list("aab" * 3 + "aa")) == 3
    assert summary.period(list("abab")) == 2
    assert summary.period(list("aaaa")) == 1
    assert summary.period(list("abc")) == 3
    with pytest.raises(ValueError, match="at least one"):
        summary.period([])
    with pytest.raises(ValueError, match="at least one"):
        summary.layer_pattern([])


# --------------------------------------------------------------------------- rows ----

def test_gemma3_like_row():
    row = atlas.atlas_row("gemma3_text", _gemma3_like(), outer=["gemma3"])
    assert row.refused is None
    assert row.layers == "5 sliding : 1 full (26 layers)"
    assert row.bases == "sliding 10000 · full 1e6"  # rope_local_base_freq on sliding layers
    assert row.rotated == "all 32"
    assert row.layout == "half"
    assert row.scaling == "default"
    assert row.no_rope == atlas.NONE
    assert row.windows == "sliding 512"
    assert row.family == "gemma3_text via gemma3"


def test_qwen3_next_like_row():
    row = atlas.atlas_row("qwen3_next", _qwen3_next_like())
    assert row.layers == "3 linear : 1 full (48 layers)"
    assert row.rotated == "1/4 leading of 64"
    assert row.no_rope == "linear layers (36 of 48)"
    assert row.bases == "10000"


def test_nope_flags_row():
    cfg = {"model_type": "smollm3", "num_hidden_layers": 36, "hidden_size": 64,
           "num_attention_heads": 2, "rope_theta": 2e6, "no_rope_layer_interval": 4}
    row = atlas.atlas_row("smollm3", cfg)
    assert row.layers == "all full (36 layers)"
    assert row.no_rope == "9 of 36 (every 4th)"
    assert row.bases == "2e6"


def test_mla_row_rotates_a_trailing_interleaved_slice():
    cfg = {"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 2, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
           "rope_theta": 10_000.0}
    row = atlas.atlas_row("deepseek_v3", cfg)
    assert row.rotated == "1/3 trailing of 192"
    assert row.layout == "interleaved"


def test_extras_query_scale_and_mrope():
    cfg = {"model_type": "ministral3", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 2, "max_position_embeddings": 4096,
           "rope_parameters": {"rope_type": "default", "rope_theta": 1e6,
                               "llama_4_scaling_beta": 0.1,
                               "original_max_position_embeddings": 16384}}
    row = atlas.atlas_row("ministral3", cfg)
    assert "query scale on every layer (beta 0.1, original length 16384)" in row.extras
    cfg = {"model_type": "qwen2_vl_text", "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 2,
           "rope_parameters": {"rope_type": "default", "rope_theta": 1e6,
                               "mrope_section": [16, 24, 24]}}
    assert atlas.atlas_row("qwen2_vl_text", cfg).extras == "M-RoPE (sections 16+24+24)"
    # without the key, the family's rotary module uses its own sections
    del cfg["rope_parameters"]["mrope_section"]
    assert atlas.atlas_row("qwen2_vl_text", cfg).extras == atlas.NONE
    assert atlas.atlas_row("qwen2_vl_text", cfg, mrope_default=(16, 24, 24)).extras == (
        "M-RoPE (sections 16+24+24, the rotary module's default)")


def test_mrope_default_is_read_from_the_rotary_module():
    """Qwen2-VL's text rotary module falls back on [16, 24, 24] (transformers 5.24,
    Qwen2VLRotaryEmbedding.__init__); Llama's has no M-RoPE."""
    pytest.importorskip("transformers")
    from booktools import hf_sweep

    assert atlas.mrope_default(hf_sweep, "qwen2_vl_text") == (16, 24, 24)
    assert atlas.mrope_default(hf_sweep, "llama") is None


def test_refused_family_gives_its_reason():
    refused = next(mt for mt, rec in FAMILIES.items() if rec.refuse)
    cfg = {"model_type": refused, "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 2}
    row = atlas.atlas_row(refused, cfg)
    assert row.refused and FAMILIES[refused].refuse in row.refused
    assert row.note == atlas.short_reason(row.refused) and row.layers == "refused"
    assert len(row.note) <= 73 and "\n" not in row.note
    unknown = atlas.atlas_row("not_a_family", {**cfg, "model_type": "not_a_family"})
    assert "'not_a_family' is not in posenc.hf_config.FAMILIES" in unknown.refused


def test_unverified_family_names_its_reason():
    """A family posenc has no verified record for is refused with that reason, not with
    the generic "not in FAMILIES"."""
    from posenc.hf_config.families import UNVERIFIED

    mt = sorted(UNVERIFIED)[0]
    cfg = {"model_type": mt, "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 2}
    row = atlas.atlas_row(mt, cfg)
    assert UNVERIFIED[mt] in row.refused and "not in posenc" not in row.refused
    assert row.note == "transformers 5.24 cannot run its default config"


@pytest.mark.parametrize("reason, short", [
    ("model_type 'x' is refused: its rotate_half flips the signs (x2, -x1), so it rotates "
     "by -theta; posenc rotates by +theta", "its rotate_half flips the signs"),
    ("its layers (CSA/HCA) attend to keys; a LayerSpec cannot", "its layers attend to keys"),
    ("each layer holds two MLA attention blocks; posenc lists one spec per layer",
     "each layer holds two MLA attention blocks"),
    ("a b " * 40, ("a b " * 18).strip() + "…"),
])
def test_short_reason_is_one_short_line(reason, short):
    assert atlas.short_reason(reason) == short


def test_chunked_layers_show_their_chunk():
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 8, "hidden_size": 64,
           "num_attention_heads": 2, "head_dim": 32, "attention_chunk_size": 8192,
           "rope_theta": 5e5}
    row = atlas.atlas_row("llama4_text", cfg)
    assert row.layers == "3 chunked : 1 full (8 layers)"
    assert row.windows == "chunks of 8192"


def test_rotated_part_needs_a_rope_layer():
    from posenc.hf_config import layer_specs

    spec = layer_specs(_qwen3_next_like(4))[0]  # a linear-attention layer
    with pytest.raises(ValueError, match="use_rope"):
        summary.rotated_part(spec)


# ------------------------------------------------------------------------ render ----

def test_table_has_one_item_per_row_and_escapes_markup():
    rows = [atlas.atlas_row("gemma3_text", _gemma3_like()),
            atlas.AtlasRow("x", layers="refused", note="key `a_b` | *c*", refused="r")]
    table = atlas.render_table(rows)
    assert table.startswith("```{list-table}\n:header-rows: 1\n:class: posenc-atlas\n")
    assert table.count("\n* - ") == 3  # header + two rows
    assert table.count("\n  - ") == 3 * (len(atlas.COLUMNS) - 1)
    assert r"key \`a\_b\` \| \*c\*" in table
    assert "**refused**" in table
    assert "\\*c\\* ({ref}`full reason <atlas-refusal-1>`)" in table  # note, then its link
    assert atlas.render_footnotes(rows) == "(atlas-refusal-1)=\n`x`\n: r\n\n"


def test_page_counts_rows_and_refusals():
    rows = [atlas.atlas_row("gemma3_text", _gemma3_like()),
            atlas.atlas_row("qwen3_next", _qwen3_next_like()),
            atlas.AtlasRow("x", layers="refused", note="why", refused="why")]
    page = atlas.render_page(rows, version="9.9", command="make atlas",
                             not_text=["some_vision"], checked_elsewhere={"qwen3_next": "t.py"})
    assert "**3 families, 2 read, 1 refused**" in page
    assert f"{len(FAMILIES)} records" in page and "Chapter 12 counts" in page
    assert "(atlas-refusal-1)=\n`x`\n: why" in page
    assert "`transformers` 9.9" in page and "`make atlas`" in page
    assert "tests/test_hf_sweep.py" in page and "`some_vision`" in page
    assert "checked by tests/t.py" in page


# -------------------------------------------------------------------------- page -----

def test_atlas_is_in_the_back_matter():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    back = next(p for p in toc["parts"] if p["caption"] == "Back matter")
    assert "book/atlas" in [c["file"] for c in back["chapters"]]


def test_atlas_page_is_not_stale():
    pytest.importorskip("transformers")
    expected = atlas.build_page()
    committed = PAGE.read_text(encoding="utf-8")
    assert committed == expected, (
        "book/atlas.md is stale: run python scripts/build_atlas.py and commit the page"
    )


def test_check_flag_reports_a_stale_page(tmp_path, monkeypatch):
    module = atlas
    monkeypatch.setattr(module, "build_page", lambda: "new\n")
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "PAGE", tmp_path / "atlas.md")
    module.PAGE.write_text("old\n", encoding="utf-8")
    assert module.main(["--check"]) == 1
    assert module.main([]) == 0 and module.PAGE.read_text(encoding="utf-8") == "new\n"
    assert module.main(["--check"]) == 0


def test_the_script_is_the_entry_point_of_booktools_atlas():
    """``scripts/build_atlas.py`` runs :func:`booktools.atlas.main` (its ``--help``)."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_atlas.py"), "--help"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "--check" in out.stdout, out.stderr


def test_module_does_not_import_transformers():
    code = ("import sys; import posenc.hf_config.summary, booktools.atlas; "
            "sys.exit('transformers' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0
