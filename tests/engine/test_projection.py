"""pca_2d, project, cosine and angle_degrees: the numbers behind the geometry view."""

import itertools

import numpy as np
import pytest

from attn_studio.engine import EngineError
from attn_studio.engine.projection import Projection2D, angle_degrees, cosine, pca_2d, project


def pairwise(points):
    return np.array([np.linalg.norm(a - b) for a, b in itertools.combinations(points, 2)])


# --------------------------------------------------------------------------- exact (d <= 2)


def test_2d_vectors_are_shown_exactly():
    pts = np.array([[0.9, 0.1], [0.6, 0.6], [0.1, 0.9]])  # money, bank, river
    p = pca_2d(pts)
    assert p.exact
    assert np.array_equal(p.coords, pts)  # not centred, not rotated, not flipped
    assert np.array_equal(p.components, np.eye(2))
    assert np.array_equal(p.mean, np.zeros(2))
    assert p.explained.sum() == pytest.approx(1.0)
    assert p.shown == pytest.approx(1.0)


def test_1d_vectors_get_a_zero_second_coordinate():
    pts = np.array([[1.5], [-2.0], [0.0]])
    p = pca_2d(pts)
    assert p.exact
    assert np.array_equal(p.coords, [[1.5, 0.0], [-2.0, 0.0], [0.0, 0.0]])
    assert p.components.shape == (2, 1)
    assert np.array_equal(p.explained, [1.0, 0.0])
    assert np.array_equal(project(np.array([[3.0]]), p), [[3.0, 0.0]])


def test_exact_results_are_read_only():
    p = pca_2d(np.ones((2, 2)))
    for arr in (p.coords, p.components, p.mean, p.explained):
        with pytest.raises(ValueError):
            arr[0] = 5.0


# --------------------------------------------------------------------------- PCA (d > 2)


def test_pca_of_2d_data_embedded_in_3d_is_the_identity_up_to_sign_and_shift():
    # Uncorrelated axes with distinct variances: the principal axes are x and y.
    flat = np.array([[x, y] for x in (-3.0, 3.0) for y in (-1.0, 1.0)] + [[0.0, 0.0]]) + [0.5, 2.0]
    pts = np.column_stack([flat, np.zeros(len(flat))])
    p = pca_2d(pts)
    assert not p.exact
    centred = flat - flat.mean(axis=0)
    for axis in range(2):
        col = p.coords[:, axis]
        assert np.allclose(np.abs(col), np.abs(centred[:, axis]), atol=1e-12)
    assert np.allclose(np.abs(p.components), np.eye(2, 3), atol=1e-12)


def test_points_in_a_tilted_plane_keep_all_variance_and_distances():
    rng = np.random.default_rng(1)
    basis, _ = np.linalg.qr(rng.normal(size=(5, 2)))  # a random plane in 5-d
    pts = rng.normal(size=(9, 2)) @ basis.T + rng.normal(size=5)
    p = pca_2d(pts)
    assert p.explained.sum() == pytest.approx(1.0, abs=1e-12)
    assert p.explained[0] >= p.explained[1]
    assert np.allclose(pairwise(p.coords), pairwise(pts), atol=1e-12)
    assert np.allclose(p.components @ p.components.T, np.eye(2), atol=1e-12)
    assert np.allclose(p.mean, pts.mean(axis=0))


def test_3d_points_in_a_plane_through_the_origin():
    pts = np.array([[1.0, 1.0, 0.0], [2.0, -1.0, 0.0], [0.0, 3.0, 0.0], [-1.0, 0.5, 0.0]]) @ np.array(
        [[1, 0, 0], [0, np.cos(0.3), np.sin(0.3)], [0, -np.sin(0.3), np.cos(0.3)]]
    )
    p = pca_2d(pts)
    assert p.explained.sum() == pytest.approx(1.0)
    assert np.allclose(pairwise(p.coords), pairwise(pts))


def test_explained_is_the_share_of_variance_in_each_axis():
    rng = np.random.default_rng(2)
    pts = rng.normal(size=(200, 4)) * [4.0, 2.0, 1.0, 0.5]
    p = pca_2d(pts)
    centred = pts - pts.mean(axis=0)
    total = np.sum(centred**2)
    assert np.allclose(p.explained, np.sum(p.coords**2, axis=0) / total)
    assert 0 < p.explained.sum() < 1


def test_sign_convention_is_deterministic():
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(6, 5))
    p = pca_2d(pts)
    for row in p.components:
        assert row[np.argmax(np.abs(row))] > 0
        assert np.linalg.norm(row) == pytest.approx(1.0)
    # The same cloud flipped through the origin spans the same plane: same axes.
    flipped = pca_2d(-pts)
    assert np.allclose(flipped.components, p.components)
    assert np.allclose(flipped.coords, -p.coords)
    again = pca_2d(pts.copy())
    assert np.array_equal(again.coords, p.coords)


def test_project_of_the_fitted_points_gives_coords():
    rng = np.random.default_rng(4)
    pts = rng.normal(size=(8, 6))
    for center in (True, False):
        p = pca_2d(pts, center=center)
        assert np.allclose(project(pts, p), p.coords, atol=1e-12)
    exact = pca_2d(pts[:, :2])
    assert np.array_equal(project(pts[:, :2], exact), exact.coords)


def test_project_places_other_vectors_on_the_same_plane():
    rng = np.random.default_rng(5)
    pts = rng.normal(size=(5, 4))
    p = pca_2d(pts)
    other = rng.normal(size=(3, 4))
    assert np.allclose(project(other, p), (other - p.mean) @ p.components.T)
    assert project(np.zeros((0, 4)), p).shape == (0, 2)


def test_uncentred_plane_goes_through_the_origin():
    rng = np.random.default_rng(6)
    pts = rng.normal(size=(10, 5)) + 3.0
    p = pca_2d(pts, center=False)
    assert np.array_equal(p.mean, np.zeros(5))
    assert np.allclose(project(np.zeros((1, 5)), p), 0.0)
    assert np.allclose(p.explained, np.sum(p.coords**2, axis=0) / np.sum(pts**2))
    # The first axis of a cloud far from the origin points at it.
    assert cosine(p.components[0], pts.mean(axis=0)) > 0.95


def test_degenerate_clouds():
    one = pca_2d(np.array([[1.0, 2.0, 3.0]]))
    assert one.coords.shape == (1, 2)
    assert np.allclose(one.coords, 0.0)
    assert np.array_equal(one.explained, [1.0, 0.0])  # no spread: nothing is lost
    assert np.allclose(one.components @ one.components.T, np.eye(2))
    through_origin = pca_2d(np.array([[1.0, 2.0, 2.0]]), center=False)
    assert np.allclose(np.linalg.norm(through_origin.coords), 3.0)
    line = pca_2d(np.array([[0.0, 0, 0], [1, 1, 1], [2, 2, 2]]))
    assert line.explained == pytest.approx([1.0, 0.0])
    assert np.allclose(line.components @ line.components.T, np.eye(2))
    empty = pca_2d(np.zeros((0, 4)))
    assert empty.coords.shape == (0, 2) and empty.components.shape == (2, 4)
    assert not empty.exact
    assert pca_2d(np.zeros((0, 2))).coords.shape == (0, 2)


def test_dataclass_fields():
    p = pca_2d(np.eye(3))
    assert isinstance(p, Projection2D)
    assert p.coords.shape == (3, 2) and p.components.shape == (2, 3)
    assert p.mean.shape == (3,) and p.explained.shape == (2,)
    assert p.dim == 3


# --------------------------------------------------------------------------- angles


@pytest.mark.parametrize(
    "a, b, degrees",
    [
        ((1, 0), (1, 1), 45.0),
        ((1, 0), (0, 2), 90.0),
        ((1, 0), (-3, 0), 180.0),
        ((2, 2), (1, 1), 0.0),
        ((1, 0, 0), (1, 1, 0), 45.0),
        ((1, 0), (1, np.sqrt(3)), 60.0),
    ],
)
def test_known_angles(a, b, degrees):
    assert angle_degrees(a, b) == pytest.approx(degrees, abs=1e-12)
    assert cosine(a, b) == pytest.approx(np.cos(np.radians(degrees)), abs=1e-12)


def test_money_bank_numbers():
    money, bank = np.array([0.9, 0.1]), np.array([0.6, 0.6])
    assert np.dot(money, bank) == pytest.approx(0.60)
    assert cosine(money, bank) == pytest.approx(0.7809, abs=1e-4)
    assert angle_degrees(money, bank) == pytest.approx(38.66, abs=0.01)


def test_nearly_parallel_vectors_keep_precision():
    a = np.array([1.0, 0.0])
    b = np.array([1.0, 1e-9])
    assert angle_degrees(a, b) == pytest.approx(np.degrees(1e-9), rel=1e-6)


def test_cosine_stays_in_range():
    v = np.array([0.1, 0.2, 0.3])
    assert -1.0 <= cosine(v, 3 * v) <= 1.0
    assert cosine(v, 3 * v) == pytest.approx(1.0)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("bad", [np.ones(3), np.ones((2, 2, 2)), 5.0])
def test_pca_refuses_wrong_ndim(bad):
    with pytest.raises(EngineError, match="dimension"):
        pca_2d(bad)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_pca_refuses_non_finite(value):
    pts = np.ones((3, 4))
    pts[1, 2] = value
    with pytest.raises(EngineError, match="non-finite"):
        pca_2d(pts)


def test_pca_refuses_zero_columns_and_text():
    with pytest.raises(EngineError):
        pca_2d(np.zeros((3, 0)))
    with pytest.raises(EngineError):
        pca_2d([["a", "b"]])


def test_project_refuses_mismatches():
    p = pca_2d(np.eye(4))
    with pytest.raises(EngineError, match="dimension"):
        project(np.ones((2, 3)), p)
    with pytest.raises(EngineError):
        project(np.ones(4), p)
    with pytest.raises(EngineError, match="non-finite"):
        project(np.full((1, 4), np.nan), p)
    with pytest.raises(EngineError, match="Projection2D"):
        project(np.ones((1, 4)), "not a projection")


@pytest.mark.parametrize("fn", [cosine, angle_degrees])
def test_zero_vector_has_no_direction(fn):
    with pytest.raises(EngineError, match="a zero vector has no direction"):
        fn([0.0, 0.0], [1.0, 2.0])
    with pytest.raises(EngineError, match="a zero vector has no direction"):
        fn([1.0, 2.0], [0.0, 0.0])


@pytest.mark.parametrize("fn", [cosine, angle_degrees])
def test_angle_helpers_refuse_bad_vectors(fn):
    with pytest.raises(EngineError, match="different lengths"):
        fn([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(EngineError, match="non-finite"):
        fn([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(EngineError):
        fn([[1.0, 2.0]], [[1.0, 2.0]])


# --------------------------------------------------------------------------- large inputs


@pytest.mark.parametrize("shape", [(40, 6), (5, 30), (1, 9), (2, 9)])
@pytest.mark.parametrize("center", [True, False])
def test_the_gram_route_for_large_inputs_agrees_with_the_svd(monkeypatch, shape, center):
    import attn_studio.engine.projection as projection

    rng = np.random.default_rng(sum(shape))
    pts = rng.normal(size=shape) * np.linspace(3.0, 0.5, shape[1])
    by_svd = pca_2d(pts, center=center)
    monkeypatch.setattr(projection, "SVD_MAX_ENTRIES", 0)
    by_gram = pca_2d(pts, center=center)
    assert np.allclose(by_gram.components @ by_gram.components.T, np.eye(2), atol=1e-9)
    assert np.allclose(by_gram.explained, by_svd.explained, atol=1e-9)
    if shape[0] > 2:  # the plane is unique: the same axes, signs included
        assert np.allclose(by_gram.components, by_svd.components, atol=1e-7)
        assert np.allclose(by_gram.coords, by_svd.coords, atol=1e-7)


def test_a_studio_sized_cloud():
    # 2048 tokens of d_model 512, the largest the studio shows, takes the Gram route.
    pts = np.random.default_rng(0).normal(size=(2048, 512)) + np.linspace(0, 1, 512)
    p = pca_2d(pts, center=False)
    assert p.coords.shape == (2048, 2)
    assert np.allclose(p.components @ p.components.T, np.eye(2), atol=1e-9)
    assert np.allclose(p.explained, np.sum(p.coords**2, axis=0) / np.sum(pts**2))
