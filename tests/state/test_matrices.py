"""Matrices out, without a window: CSV with labels, .npy / .npz, LaTeX, the whole model as arrays."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attn_studio import matrices
from attn_studio.matrices import ExportError
from attn_studio.studio import Studio


def test_csv_round_trips_to_the_same_numbers():
    array = np.array([[1 / 3, -1e-12, 1e300], [0.0, -2.5, np.pi]])
    rows = ["a,b", 'say "hi"']
    cols = ["d1", "d 2", "d;3"]
    text = matrices.matrix_to_csv(array, rows, cols)
    table = list(csv.reader(io.StringIO(text)))
    assert table[0] == [""] + cols
    assert [r[0] for r in table[1:]] == rows
    back = np.array([[float(v) for v in r[1:]] for r in table[1:]])
    np.testing.assert_array_equal(back, array)
    with pytest.raises(ExportError):
        matrices.matrix_to_csv(array, ["only one"], cols)


def test_latex_is_a_bmatrix():
    array = np.arange(12, dtype=float).reshape(3, 4) / 7
    text = matrices.matrix_to_latex(array)
    assert text.startswith("\\begin{bmatrix}") and text.rstrip().endswith("\\end{bmatrix}")
    assert text.count("&") == 3 * 3
    assert text.count("\\\\") == 2
    assert "0.1429" in text
    masked = matrices.matrix_to_latex(np.array([[0.5, -np.inf]]))
    assert "-\\infty" in masked


def test_matrices_save_as_csv_npy_npz(tmp_path):
    array = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    rows, cols = ["Your", "journey"], ["x1", "x2", "x3"]
    matrices.save_matrix(tmp_path / "w.npz", array, rows, cols)
    with np.load(tmp_path / "w.npz", allow_pickle=False) as data:
        np.testing.assert_array_equal(data["array"], array)
        assert list(data["row_labels"]) == rows and list(data["col_labels"]) == cols
    matrices.save_matrix(tmp_path / "w.npy", array, rows, cols)
    np.testing.assert_array_equal(np.load(tmp_path / "w.npy", allow_pickle=False), array)
    matrices.save_matrix(tmp_path / "w.csv", array, rows, cols)
    assert (tmp_path / "w.csv").read_text(encoding="utf-8") == matrices.matrix_to_csv(array, rows, cols)
    with pytest.raises(ExportError, match="format"):
        matrices.save_matrix(tmp_path / "w.xlsx", array, rows, cols)
    with pytest.raises(ExportError, match="does not exist"):
        matrices.save_matrix(tmp_path / "missing" / "w.csv", array, rows, cols)


def test_the_whole_model_saves_as_npz(tmp_path):
    studio = Studio()
    studio.update(projections=True, heads=2, causal=True)
    arrays = matrices.studio_arrays(studio)
    for key in ("x", "w_q", "w_k", "w_v", "w_o", "q", "k", "v", "scores", "logits", "weights",
                "head_outputs", "concat", "output"):
        assert key in arrays, key
    np.testing.assert_array_equal(arrays["w_q"], studio.state.w_q)
    np.testing.assert_allclose(arrays["concat"] @ arrays["w_o"], arrays["output"], atol=1e-12)
    matrices.save_arrays(tmp_path / "model.npz", arrays)
    with np.load(tmp_path / "model.npz", allow_pickle=False) as data:
        np.testing.assert_array_equal(data["weights"], studio.result.weights)
        assert list(data["tokens"]) == studio.state.tokens
    # Without projections the engine used Q = K = V = X: the file says so with identities.
    studio.update(projections=False)
    arrays = matrices.studio_arrays(studio)
    np.testing.assert_array_equal(arrays["w_q"][0], np.eye(studio.state.d_model))
    np.testing.assert_allclose(arrays["q"][0], arrays["x"], atol=1e-12)
    np.testing.assert_allclose(arrays["concat"] @ arrays["w_o"], arrays["output"], atol=1e-12)


def test_arrays_that_are_not_plain_are_refused_and_nothing_is_written(tmp_path):
    with pytest.raises(ExportError, match="not a plain"):
        matrices.save_arrays(tmp_path / "model.npz", {"x": np.array([object()], dtype=object)})
    with pytest.raises(ExportError, match=".npz"):
        matrices.save_arrays(tmp_path / "model.npy", {"x": np.eye(2)})
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("the lecture's numbers", encoding="utf-8")
    with pytest.raises(ExportError):
        matrices.save_matrix(path, np.zeros((2, 2, 2)))
    assert path.read_text(encoding="utf-8") == "the lecture's numbers"
    assert [p.name for p in tmp_path.iterdir()] == ["w.csv"]
