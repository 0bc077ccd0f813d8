"""One-family rules: the named functions a :class:`~posenc.hf_config.families.Family` record
refers to (``translate``, ``rope_rule``) where a family's rule is not a value.

Each mirrors a few lines of the family's ``transformers`` 5.24 config class or attention
forward, named in its docstring. Translators (``Family.translate``) change a
``config.json`` dict in place the way the config class's constructor does and leave an
already-translated dict as it is; rope rules (``Family.rope_rule``) map ``(config,
layer_types, flags)`` to the layers that rotate. Kept apart from the registry
(:mod:`~posenc.hf_config.families`) so that the records read as data.
"""

from __future__ import annotations


def _minimax_m2_rotary_dim(d: dict) -> None:
    """``MiniMaxM2Config.convert_rope_params_to_dict``: a legacy top-level ``rotary_dim``
    becomes ``partial_rotary_factor = rotary_dim / head_dim`` unless the file sets a
    ``partial_rotary_factor`` itself (published MiniMax-M2 files carry ``rotary_dim``)."""
    r = d.get("rotary_dim")
    if r is not None and d.get("partial_rotary_factor") is None and d.get("head_dim"):
        d["partial_rotary_factor"] = r / d["head_dim"]


def _lfm2_full_attn_idxs(d: dict) -> None:
    """``Lfm2Config.__post_init__``: without ``layer_types``, the layers listed in
    ``full_attn_idxs`` (default: every layer) are ``"full_attention"`` and the others
    ``"conv"`` (short convolutions: no positions)."""
    n = d.get("num_hidden_layers")
    if d.get("layer_types") is None and isinstance(n, int) and not isinstance(n, bool):
        idxs = d.get("full_attn_idxs")
        full = set(range(n) if idxs is None else idxs)
        d["layer_types"] = ["full_attention" if i in full else "conv" for i in range(n)]


def _bamba_half_rotary(d: dict) -> None:
    """``BambaConfig.__post_init__`` sets ``partial_rotary_factor = 0.5`` whatever the
    file's top-level value ("hardcode for BC"); a RoPE dict's own factor still wins."""
    d["partial_rotary_factor"] = 0.5


def _cohere2_moe_prefix(d: dict) -> None:
    """``Cohere2MoeConfig.__post_init__``: the first ``first_k_dense_replace`` layers
    (popped, default 0) are dense-MLP layers whose pattern is
    ``prefix_dense_sliding_window_pattern`` (default 1: every one global), the rest follow
    ``sliding_window_pattern`` (default 4); ``mlp_layer_types`` marks the prefix ``"dense"``."""
    n = d.get("num_hidden_layers")
    if not isinstance(n, int) or isinstance(n, bool):
        return
    k = d.get("first_k_dense_replace") or 0
    if d.get("layer_types") is None:
        pre = d.get("prefix_dense_sliding_window_pattern", 1)
        rest = d.get("sliding_window_pattern", 4)
        d["layer_types"] = (
            ["sliding_attention" if (i + 1) % pre else "full_attention" for i in range(k)]
            + ["sliding_attention" if (i + 1) % rest else "full_attention"
               for i in range(n - k)])
    if d.get("mlp_layer_types") is None:
        d["mlp_layer_types"] = ["dense" if i < k else "sparse" for i in range(n)]


def _neomme_rope_per_type(d: dict) -> None:
    """``NeoMMEConfig.convert_rope_params_to_dict``: one RoPE dict per layer type, its
    ``rope_theta`` the top-level one or the class's per-type default (full 1e6, sliding
    1e4) and its ``partial_rotary_factor`` the per-type default (full 0.25, sliding 1)."""
    raw = d.get("rope_parameters") or d.get("rope_scaling") or {}
    types = set(d.get("layer_types") or ())
    if raw and not set(raw) <= types | {"full_attention", "sliding_attention"}:
        raise ValueError(
            "config['rope_parameters'] of model_type 'neomme' must be one dict per layer "
            f"type ({sorted(types)}), as NeoMMEConfig builds it; got keys {sorted(raw)}")
    theta = d.get("rope_theta")
    bases = {"full_attention": 1_000_000.0, "sliding_attention": 10_000.0}
    factors = {"full_attention": 0.25, "sliding_attention": 1.0}
    nested = {k: dict(v) for k, v in raw.items()}
    for lt in types:
        p = nested.setdefault(lt, {})
        p.setdefault("rope_type", "default")
        p.setdefault("rope_theta", theta if theta is not None else bases.get(lt))
        p.setdefault("partial_rotary_factor", factors.get(lt))
    d.pop("rope_scaling", None)
    d["rope_parameters"] = nested


def _neomme_windows(d: dict) -> None:
    """``NeoMMEConfig.__post_init__``: without ``per_layer_config``, full layers get no
    window and every other sliding layer (by sliding-layer index) the long window, 1024."""
    if "per_layer_config" in d:
        return
    per, sliding = {}, 0
    for i, t in enumerate(d.get("layer_types") or ()):
        if t == "full_attention":
            per[i] = {"sliding_window": None}
        elif t == "sliding_attention":
            if sliding % 2:
                per[i] = {"sliding_window": 1024}
            sliding += 1
    d["per_layer_config"] = per


def _neomme_translate(d: dict) -> None:
    """NeoMME's two constructor rules: :func:`_neomme_rope_per_type`, :func:`_neomme_windows`."""
    _neomme_rope_per_type(d)
    _neomme_windows(d)


def _mistral4_mla_head(d: dict) -> None:
    """``Mistral4Config.__post_init__``: ``head_dim = qk_nope_head_dim + qk_rope_head_dim``
    (always), and ``partial_rotary_factor = qk_rope_head_dim / head_dim`` unless the RoPE
    dict sets one: the rope slice is the trailing part of a whole head."""
    nope, rope = d.get("qk_nope_head_dim", 64), d.get("qk_rope_head_dim", 64)
    if isinstance(nope, int) and isinstance(rope, int):
        d["head_dim"] = nope + rope
        if d.get("partial_rotary_factor") is None:
            d["partial_rotary_factor"] = rope / (nope + rope)


def _modernbert_local_attention(d: dict) -> None:
    """``ModernBertConfig``: ``sliding_window`` is a property, ``local_attention // 2``,
    whose setter sets ``local_attention = 2 * value`` — a file's ``sliding_window`` is set
    after the fields, so it wins; without either, ``local_attention`` is 128."""
    if d.get("sliding_window") is not None:
        d["local_attention"] = 2 * d["sliding_window"]
    elif d.get("local_attention") is None and "local_attention" not in d:
        d["local_attention"] = 128


def _modernbert_decoder_window(d: dict) -> None:
    """``ModernBertDecoderConfig.__post_init__`` sets ``sliding_window = local_attention //
    2 if local_attention else -1`` before the file's own keys are set, so an explicit
    ``sliding_window`` (null included) wins; the window -1 of a null ``local_attention``
    is refused (the mask's meaning of -1 is not what posenc represents)."""
    if "sliding_window" not in d:
        la = d.get("local_attention", 128)
        d["sliding_window"] = la // 2 if la else -1
    if d["sliding_window"] == -1:
        raise ValueError(
            "config['local_attention'] is null or 0: ModernBertDecoderConfig then sets "
            "sliding_window = -1, which its sliding layers pass to the mask as a window; "
            "posenc does not represent a window of -1 (give local_attention or "
            "sliding_window)")


def _smollm3_layer_types(d: dict) -> None:
    """``SmolLM3Config.__post_init__``: without ``layer_types``, layer ``i`` is
    ``"sliding_attention"`` iff ``use_sliding_window`` (default false), a ``sliding_window``
    is set and the layer has no RoPE (``no_rope_layers[i] == 0``, default every
    ``no_rope_layer_interval``-th layer, 4), else ``"full_attention"``."""
    n = d.get("num_hidden_layers")
    if d.get("layer_types") is not None or not isinstance(n, int) or isinstance(n, bool):
        return
    flags = d.get("no_rope_layers")
    if flags is None:
        every = d.get("no_rope_layer_interval", 4)
        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            return  # left to the NoPE reader, which names the key
        flags = [int((i + 1) % every != 0) for i in range(n)]
    window = bool(d.get("use_sliding_window", False)) and d.get("sliding_window") is not None
    d["layer_types"] = ["sliding_attention" if window and not flags[i] else "full_attention"
                        for i in range(min(n, len(flags)))]


def _gemma4_global_head_dim(d: dict) -> None:
    """``Gemma4TextConfig.__post_init__`` (and Gemma 4 Unified's): without
    ``per_layer_config``, every ``"full_attention"`` layer gets ``{"head_dim":
    global_head_dim}`` (popped, default 512) as its own override; the layer types are the
    file's list or every 6th layer full, the last layer always full."""
    n = d.get("num_hidden_layers")
    if "per_layer_config" in d or not isinstance(n, int) or isinstance(n, bool):
        return
    types = list(d.get("layer_types") or [
        "full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(n)])
    if types:
        types[-1] = "full_attention"
    width = d.get("global_head_dim", 512)
    d["per_layer_config"] = {i: {"head_dim": width} for i, t in enumerate(types)
                             if t == "full_attention"}


def _mimo_window_size(d: dict) -> None:
    """``MiMoV2FlashConfig.__post_init__``: a legacy ``sliding_window_size`` (the reference
    SGLang implementation's previous tokens) sets ``sliding_window = size + 1``."""
    size = d.get("sliding_window_size")
    if isinstance(size, int) and not isinstance(size, bool):
        d["sliding_window"] = size + 1


def _zamba2_layer_types(d: dict) -> None:
    """``Zamba2Config``: a file's ``layer_types`` is ``layers_block_type``
    (``attribute_map``; blocks ``"mamba"`` / ``"hybrid"``), read with the block mapping, not
    as layer types; ``__post_init__`` sets ``attention_head_dim`` (``head_dim``) to ``2 *
    hidden_size // num_attention_heads`` whatever the file says (the hybrid block attends
    over the input and the original embeddings concatenated), and ``use_long_context``
    sets ``max_position_embeddings`` to 16384."""
    if d.get("layer_types") is not None:
        listed = d.pop("layer_types")
        if d.get("layers_block_type") is None:
            d["layers_block_type"] = listed
    hidden, heads = d.get("hidden_size"), d.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        d["head_dim"] = 2 * hidden // heads
    if d.get("use_long_context"):
        d["max_position_embeddings"] = 16384


def _window_only_with_switch(d: dict) -> None:
    """``Qwen3MoeConfig.__post_init__``: ``sliding_window = sliding_window if
    use_sliding_window else None`` (``use_sliding_window`` defaults to false)."""
    if not d.get("use_sliding_window", False):
        d["sliding_window"] = None


def _gpt_neox_one_head_size(d: dict) -> None:
    """``GPTNeoXRotaryEmbedding`` builds its frequencies for ``head_dim`` (when set) but
    ``GPTNeoXAttention`` splits heads as ``hidden_size // num_attention_heads`` and rotates
    that size times the factor: a ``head_dim`` that differs is refused (the tables and the
    rotated channels disagree; posenc describes one head width)."""
    hd, hidden, heads = d.get("head_dim"), d.get("hidden_size"), d.get("num_attention_heads")
    if (hd is not None and isinstance(hidden, int) and isinstance(heads, int) and heads > 0
            and hd != hidden // heads):
        raise ValueError(
            f"config['head_dim'] = {hd} differs from hidden_size // num_attention_heads = "
            f"{hidden // heads}: GPT-NeoX's rotary module builds its tables for head_dim but "
            "its attention rotates channels of the hidden_size // num_attention_heads head; "
            "posenc does not represent the two widths")


def _head_dim_from_hidden(d: dict) -> None:
    """``UnlimitedOcrTextConfig.__post_init__`` sets ``head_dim = hidden_size //
    num_attention_heads`` whatever the file says."""
    hidden, heads = d.get("hidden_size"), d.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        d["head_dim"] = hidden // heads


def _llama4_layer_types(d: dict) -> None:
    """``Llama4TextConfig.__post_init__``: without ``layer_types``, a layer that rotates
    (``no_rope_layers[i]``, default every 4th layer without) is ``"chunked_attention"``
    when ``attention_chunk_size`` is set (default 8192), the others ``"full_attention"``."""
    n = d.get("num_hidden_layers")
    if d.get("layer_types") is not None or not isinstance(n, int) or isinstance(n, bool):
        return
    flags = d.get("no_rope_layers")
    if not flags:
        every = d.get("no_rope_layer_interval") or 4
        if not isinstance(every, int) or every < 1:
            return  # left to the NoPE reader, which names the key
        flags = [int((i + 1) % every != 0) for i in range(n)]
    chunked = d.get("attention_chunk_size", 8192) is not None
    d["layer_types"] = ["chunked_attention" if f and chunked else "full_attention"
                        for f in flags]


def _layer_theta_per_layer(d: dict) -> None:
    """``GraniteSWAModel`` (and Granite-MoE-SWA): ``layer_rope_theta[i]`` is layer ``i``'s
    base — one rotary module per distinct non-zero base, built from ``rope_parameters``
    with that ``rope_theta`` — and 0 means no positions (:func:`_nope_where_theta_zero`);
    without the list every layer has the global base. Written as per-layer overrides of
    the RoPE dict (``per_layer_config``)."""
    thetas = d.get("layer_rope_theta")
    if not isinstance(thetas, list):
        return
    key = "rope_scaling" if d.get("rope_scaling") else "rope_parameters"
    base = d.get(key) or {}
    if any(isinstance(v, dict) for v in base.values()):
        raise ValueError("config['layer_rope_theta'] with a per-layer-type RoPE dict: posenc "
                         "does not know which base such a layer gets")
    per = {int(k): dict(v) for k, v in (d.get("per_layer_config") or {}).items()}
    for i, theta in enumerate(thetas):
        if theta:
            per.setdefault(i, {})[key] = {**base, "rope_theta": theta}
    d["per_layer_config"] = per


def _nope_where_theta_zero(d: dict, types: list, flags: list, thetas=None) -> list:
    """Granite-SWA: the model passes no position embeddings to a layer whose
    ``layer_rope_theta`` is 0 (``GraniteSWAModel.forward``)."""
    n = len(types)
    thetas = d.get("layer_rope_theta") if thetas is None else thetas
    if thetas is None:
        return flags
    if len(thetas) < n:
        raise ValueError(f"config['layer_rope_theta'] has {len(thetas)} entries for {n} layers")
    return [f and bool(t) for f, t in zip(flags, thetas[:n], strict=True)]


def _muse_nope_layers(d: dict, types: list, flags: list) -> list:
    """Muse Glimmer / Spark: the model passes no position embeddings to a layer whose
    ``layer_rope_theta`` is 0 (``MuseGlimmerModel.forward``); without the list the config
    class puts 0 on every 4th layer counting from the last (``MuseGlimmerConfig`` and
    ``MuseSparkConfig.__post_init__``); a non-zero entry only switches RoPE on."""
    n = len(types)
    thetas = d.get("layer_rope_theta")
    if thetas is None:
        thetas = [0 if (n - 1 - i) % 4 == 0 else 1 for i in range(n)]
    return _nope_where_theta_zero(d, types, flags, thetas)


def _qwen2_window_layers(d: dict) -> None:
    """``Qwen2Config.__post_init__`` (Qwen3, Qwen2-VL, Qwen2.5-VL, Qwen2.5-Omni text alike):
    ``sliding_window`` is kept only with ``use_sliding_window`` (default false), and without
    ``layer_types`` layer ``i`` is ``"sliding_attention"`` iff a window is kept and
    ``i >= max_window_layers`` (the class default is in :attr:`Family.defaults`)."""
    if not d.get("use_sliding_window", False):
        d["sliding_window"] = None
    n = d.get("num_hidden_layers")
    if d.get("layer_types") is None and isinstance(n, int) and not isinstance(n, bool):
        first = d.get("max_window_layers")
        window = d.get("sliding_window") is not None and isinstance(first, int)
        d["layer_types"] = ["sliding_attention" if window and i >= first else "full_attention"
                            for i in range(n)]


def _qwen2_moe_window_layers(d: dict) -> None:
    """``Qwen2MoeConfig.__post_init__``: ``sliding_window`` is kept only with
    ``use_sliding_window`` (else 0), and without ``layer_types`` layer ``i`` is
    ``"sliding_attention"`` iff ``(i + 1) % 2``, ``i < max_window_layers`` and
    ``use_sliding_window``; listed sliding layers without ``use_sliding_window`` get a window
    of 0, which posenc refuses."""
    use = bool(d.get("use_sliding_window", False))
    if not use:
        d["sliding_window"] = 0
    n = d.get("num_hidden_layers")
    if d.get("layer_types") is None and isinstance(n, int) and not isinstance(n, bool):
        last = d.get("max_window_layers")
        d["layer_types"] = [
            "sliding_attention" if use and (i + 1) % 2 and isinstance(last, int) and i < last
            else "full_attention" for i in range(n)]
    if not use and "sliding_attention" in (d.get("layer_types") or ()):
        raise ValueError(
            "config['layer_types'] lists sliding layers while 'use_sliding_window' is false: "
            "Qwen2MoeConfig then sets sliding_window = 0 and those layers pass a window of 0 "
            "to their attention; posenc does not represent a window of 0")


def _zamba2_mem_rope(d: dict, types: list, flags: list) -> list:
    """``Zamba2Attention.forward`` rotates only ``if self.config.use_mem_rope`` (default
    false)."""
    return flags if d.get("use_mem_rope", False) else [False] * len(flags)


def _rope_if_embedding_type_rope(d: dict, types: list, flags: list) -> list:
    """``GraniteMoeHybridModel.__init__`` builds its rotary module only when
    ``position_embedding_type == "rope"`` (default ``None``; Granite-4.0-H files say
    ``"nope"``); otherwise its attention layers get no positions."""
    return flags if d.get("position_embedding_type") == "rope" else [False] * len(flags)


def _global_rope_without_window(d: dict, types: list, flags: list) -> list:
    """EXAONE 4, EXAONE-MoE, Kolibri: ``if self.sliding_window is None or self.is_sliding``
    — with a null ``sliding_window`` the global layers rotate too."""
    if d.get("sliding_window") is not None:
        return flags
    return [f or t == "full_attention" for f, t in zip(flags, types, strict=True)]


def _rope_only_with_window(d: dict, types: list, flags: list) -> list:
    """Cohere 2, Flint: ``if self.sliding_window is not None`` (the layer's window, set on
    sliding layers only) — with a null ``sliding_window`` no layer rotates."""
    return flags if d.get("sliding_window") is not None else [False] * len(flags)


def _cohere2_moe_rope(d: dict, types: list, flags: list) -> list:
    """``Cohere2MoeAttention``: ``if self.sliding_window is not None or self.force_rope``,
    with ``force_rope`` on dense-prefix layers (``mlp_layer_types[i] == "dense"``) when
    ``prefix_dense_sliding_window_pattern == 1`` — those global layers rotate."""
    window = d.get("sliding_window") is not None
    mlp = list(d.get("mlp_layer_types") or ())
    mlp += ["sparse"] * (len(types) - len(mlp))
    force = d.get("prefix_dense_sliding_window_pattern", 1) == 1
    return [(f and window) or (force and m == "dense")
            for f, m in zip(flags, mlp[:len(types)], strict=True)]


def _mllama_cross_layers(d: dict) -> None:
    """``MllamaTextConfig.__post_init__``: a missing or null ``cross_attention_layers``
    (the layers without RoPE) becomes ``[3, 8, 13, 18, 23, 28, 33, 38]``."""
    if d.get("cross_attention_layers") is None:
        d["cross_attention_layers"] = [3, 8, 13, 18, 23, 28, 33, 38]
