"""What ``transformers`` 5.24 numbers during Qwen2-VL *generation*: three numberings.

A tiny random ``Qwen2VLForConditionalGeneration`` (built offline, one layer) gets a prompt
of one text token, a video of 6 frame groups of 4 × 4 patches (merged 2 × 2: 24 video
tokens, time ids 1–6) and one closing text token, the long-video case of chapter 11. A
forward hook on the language model's rotary embedding records the position ids it is
given. Pinned here:

1. the prompt: ``get_rope_index``, text after the video at ``p + max(H, W)``
   (``mrope_position_ids(..., text_after_vision="hw")``): closing text ``[3, 3, 3]``;
2. ``model.generate()``: each new token continues from the *last* prompt id + 1
   (``_update_model_kwargs_for_generation`` extends the prepared ``position_ids``):
   ``[4, 4, 4]``, then ``[5, 5, 5]`` — inside the video's time ids;
3. a cached forward call without ``position_ids``: ``cache length + rope_deltas`` with
   ``rope_deltas = max + 1 − len(prompt)``: ``[7, 7, 7]``, the paper's ``max + 1``.

The rule the checkpoints were trained with (``text_after_vision="max"``) gives the closing
text ``[7, 7, 7]`` and the first generated token ``[8, 8, 8]``.
"""

from __future__ import annotations

import pytest
import torch

from posenc.multi_axis import mrope_position_ids

T, H_PATCH, W_PATCH, MERGE = 6, 4, 4, 2
N_VIDEO = T * H_PATCH * W_PATCH // MERGE**2
TYPES = [0] + [2] * N_VIDEO + [0]
GRID = [[T, H_PATCH, W_PATCH]]


@pytest.fixture(scope="module")
def tiny_qwen2_vl():
    tf = pytest.importorskip("transformers")
    cfg = tf.Qwen2VLConfig(
        text_config={
            "vocab_size": 64, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
            "max_position_embeddings": 128, "bos_token_id": 0, "eos_token_id": 1,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                "mrope_section": [2, 3, 3]},
        },
        vision_config={
            "depth": 1, "embed_dim": 16, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
            "in_channels": 3, "patch_size": 2, "spatial_merge_size": MERGE,
            "temporal_patch_size": 2,
        },
        image_token_id=60, video_token_id=61, vision_start_token_id=62,
        vision_end_token_id=63, bos_token_id=0, eos_token_id=1, pad_token_id=2,
    )
    torch.manual_seed(0)
    model = tf.Qwen2VLForConditionalGeneration(cfg).eval()
    seen = []
    model.model.language_model.rotary_emb.register_forward_hook(
        lambda module, args, out: seen.append(args[1].clone())
    )
    ids = torch.tensor([[5] + [61] * N_VIDEO + [7]])
    inputs = {
        "input_ids": ids,
        "mm_token_type_ids": torch.tensor([TYPES]),
        "pixel_values_videos": torch.randn(T * H_PATCH * W_PATCH, 3 * 2 * 2 * 2),
        "video_grid_thw": torch.tensor(GRID),
    }
    return model, inputs, seen


def _ids(position_ids):
    """(3, 1, s) transformers ids -> (s, 3) as posenc returns them."""
    return position_ids[:, 0].T


def test_generate_continues_from_the_last_prompt_id(tiny_qwen2_vl):
    model, inputs, seen = tiny_qwen2_vl
    seen.clear()
    with torch.no_grad():
        model.generate(**inputs, attention_mask=torch.ones_like(inputs["input_ids"]),
                       max_new_tokens=3, do_sample=False, eos_token_id=None)
    hw = mrope_position_ids(TYPES, video_grid_thw=GRID, spatial_merge_size=MERGE,
                            text_after_vision="hw")
    prompt, first, second = (_ids(p) for p in seen)
    assert torch.equal(prompt, hw)  # numbering 1: the prompt
    assert hw[-1].tolist() == [3, 3, 3]
    assert first.tolist() == [[4, 4, 4]] == [(hw[-1] + 1).tolist()]  # numbering 2
    assert second.tolist() == [[5, 5, 5]]
    video_t = set(hw[1:-1, 0].tolist())
    assert video_t == {1, 2, 3, 4, 5, 6} and {4, 5} <= video_t  # the collision
    assert model.model.rope_deltas.item() == hw.max().item() + 1 - len(TYPES)


def test_cached_forward_without_position_ids_uses_rope_deltas(tiny_qwen2_vl):
    model, inputs, seen = tiny_qwen2_vl
    seen.clear()
    with torch.no_grad():
        out = model(**inputs, use_cache=True)
        model(input_ids=torch.tensor([[9]]), cache=out.cache, use_cache=True)
    hw = mrope_position_ids(TYPES, video_grid_thw=GRID, spatial_merge_size=MERGE,
                            text_after_vision="hw")
    trained = mrope_position_ids(TYPES, video_grid_thw=GRID, spatial_merge_size=MERGE)
    prompt, step = (_ids(p) for p in seen)
    assert torch.equal(prompt, hw)
    assert step.tolist() == [[7, 7, 7]] == [[hw.max().item() + 1] * 3]  # numbering 3
    # The trained rule: closing text at max + 1 = 7, so generation would start at 8.
    assert trained[-1].tolist() == [7, 7, 7]
    assert trained.max().item() + 1 == 8
