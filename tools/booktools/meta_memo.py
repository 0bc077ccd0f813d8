"""Meta-device ops answered from memory: what the family and key sweeps run their layers
under (:func:`booktools.hf_sweep.observe`).

On the meta device an op computes no values, only its output's shape, strides and dtype,
and those are a function of its inputs' shapes, strides, dtypes and other arguments alone.
torch 2.13 computes them for the elementwise ops (``mul``, ``add``, ``cat``, ``neg``,
``rsqrt``, ``mean``, ...) through its Python references, 80-230 µs a call against about
1 µs for a view, and a sweep repeats the same ops on the same shapes layer after layer,
family after family and variant after variant: of the calls a family sweep makes that
can be answered so (below), 99 % are repeats (157,362 of 158,772). :class:`MetaMemo` is
a dispatch mode (below autograd, as a meta kernel is) that runs each op as torch does the
first time it meets its inputs, records the output's metadata, and answers a repeat with a
new empty tensor of exactly that metadata.

Only ops that can be answered so are: a functional op (no argument or result that aliases
or mutates, by its schema) whose tensor arguments are all plain strided tensors on meta
(no subclass) and whose other arguments are plain values (numbers, strings, dtypes,
``None``, lists of them), with the default dtype (which a factory op without a ``dtype``
reads) part of the key; its results must be strided meta tensors with no storage offset
and no conjugate or negative bit. Views, in-place ops, ops on other devices or on symbolic
shapes and anything else run as they are, every time. An answer is a tensor of its own
storage: the few ops whose schema does not say that their result shares an input's
storage (``_unsafe_view``, which ``matmul`` uses) or that they write to one
(``native_batch_norm``'s running statistics) differ from torch's result only in that, which
on meta, where a storage holds no values, nothing the sweeps read can tell.
``tests/test_hf_sweep.py`` checks that layers observed under the mode make the same rotary
calls on tensors of the same shapes, strides and dtypes as without it, and that a memory
that answers with a wrong dtype is caught.
"""

from __future__ import annotations

import functools

import torch
from torch.utils._python_dispatch import TorchDispatchMode

#: Argument types an op's answer may depend on besides its tensors' metadata.
_PLAIN = (bool, int, float, str, type(None), torch.dtype, torch.device, torch.layout,
          torch.memory_format)


class _Unanswerable(Exception):
    """This call cannot be answered from memory (run it)."""


@functools.cache
def functional(op) -> bool:
    """Whether ``op`` (an ``OpOverload``) neither aliases nor mutates an argument and
    returns something, by its schema (``False`` for an op without one)."""
    schema = getattr(op, "_schema", None)
    return (schema is not None and bool(schema.returns)
            and all(a.alias_info is None for a in schema.arguments)
            and all(r.alias_info is None for r in schema.returns))


#: The tensor types whose calls can be answered (a subclass may dispatch on its own).
_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def _key(value):
    if isinstance(value, torch.Tensor):
        if (type(value) not in _PLAIN_TENSORS or value.device.type != "meta"
                or value.layout is not torch.strided):
            raise _Unanswerable
        return ("tensor", tuple(value.shape), value.stride(), value.storage_offset(),
                value.dtype, value.is_conj(), value.is_neg())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, _PLAIN):
        return (type(value).__name__, value)
    raise _Unanswerable


def _metadata(out):
    if isinstance(out, torch.Tensor):
        if (out.device.type != "meta" or out.layout is not torch.strided
                or out.storage_offset() or out.is_conj() or out.is_neg()):
            raise _Unanswerable
        return ("tensor", tuple(out.shape), out.stride(), out.dtype)
    if isinstance(out, (list, tuple)):
        return (type(out).__name__, tuple(_metadata(o) for o in out))
    raise _Unanswerable


def make(metadata):
    """A new empty meta tensor (or a tuple or list of them) with recorded ``metadata``."""
    kind, *rest = metadata
    if kind == "tensor":
        shape, stride, dtype = rest
        return torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    items = [make(m) for m in rest[0]]
    return items if kind == "list" else tuple(items)


class MetaMemo(TorchDispatchMode):
    """Answers repeated functional meta-device ops from ``memory`` (a dict shared by as
    many ``with MetaMemo(memory):`` blocks as should share it)."""

    def __init__(self, memory: dict):
        super().__init__()
        self.memory = memory

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not functional(func) or any(t not in _PLAIN_TENSORS for t in types):
            return func(*args, **kwargs)
        try:
            key = (func, torch.get_default_dtype(), _key(args),
                   _key(tuple(sorted(kwargs.items()))))
            known = self.memory.get(key)
        except (_Unanswerable, TypeError):  # TypeError: a symbolic size cannot be hashed
            return func(*args, **kwargs)
        if known is not None:
            return make(known)
        out = func(*args, **kwargs)
        try:
            self.memory[key] = _metadata(out)
        except _Unanswerable:
            pass
        return out
