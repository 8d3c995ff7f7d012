"""The intervals' own quantiles are numpy's linear quantiles to the bit (app.honest.engine.
intervals.quantiles, written out for speed: a stored interval must not move with it)."""

import numpy as np
import pytest

from app.honest.engine.intervals import quantiles

# The levels the intervals ask for, the ends and values next to them.
EDGES = [0.0, 1.0, 0.025, 0.975, 1e-300, 1 - 1e-16, float(np.nextafter(1.0, 0.0)), 0.5]


@pytest.mark.parametrize("seed", range(6))
def test_the_quantiles_are_numpys_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    for trial in range(300):
        n = int(rng.integers(2, 1500))
        values = [
            rng.random(n),
            np.round(rng.random(n), 2),  # ties
            rng.normal(size=n) * 1e6,
            np.full(n, 0.5),  # all equal
        ][trial % 4]
        levels = np.concatenate([rng.random(4), EDGES])
        expected = np.quantile(values, levels)
        found = quantiles(np.sort(values), levels.copy())
        assert np.array_equal(found, expected), (n, levels[found != expected])


@pytest.mark.parametrize("level", [float("nan"), -0.1, 1.5])
def test_a_level_numpy_refuses_is_refused(level):
    # A BCa level is NaN when every replicate lies on one side of the estimate: the interval
    # fails with a note for the host, as it did with numpy's quantile.
    values = np.sort(np.random.default_rng(1).random(50))
    levels = np.array([level, 0.5])
    with pytest.raises(ValueError):
        np.quantile(values, levels)
    with pytest.raises(ValueError):
        quantiles(values, levels)
