"""The Ladder: shown values sit on the grid and never get worse, attacks stay near chance, and an
honest team's real improvements are released."""

import numpy as np
import pytest

from app.honest.engine import ladder as lad
from app.honest.engine.attack import boosting_attack
from app.honest.engine.paired import mean_paired_se


def _on_grid(values: np.ndarray, step: float) -> bool:
    ratio = values / step
    return bool(np.all(np.abs(ratio - np.round(ratio)) < 1e-6))


def test_ten_thousand_random_sequences_stay_on_the_grid_and_monotone():
    rng = np.random.default_rng(2015)
    for _ in range(10_000):
        length = int(rng.integers(1, 40))
        greater = bool(rng.integers(0, 2))
        step = float(rng.choice([0.001, 0.01, 1 / np.sqrt(4000), 0.05]))
        scores = rng.normal(0.7, 0.05, size=length) + rng.normal(0, 0.02) * np.arange(length)
        baseline = float(rng.normal(0.7, 0.05)) if rng.random() < 0.5 else None
        if rng.random() < 0.5:
            run = lad.ladder(scores, step=step, greater_is_better=greater, baseline=baseline)
            grid = step
        else:
            n = int(rng.integers(50, 5000))
            ses = np.abs(rng.normal(0, 0.01, size=length))
            run = lad.ladder_free(
                scores,
                lambda t, best, ses=ses: ses[t],
                n=n,
                greater_is_better=greater,
                baseline=baseline,
            )
            grid = 1.0 / n
        shown = run.displayed[np.isfinite(run.displayed)]
        assert _on_grid(shown, grid)
        steps = np.diff(shown) if greater else -np.diff(shown)
        assert np.all(steps >= -1e-12)
        # A release shows that submission's score on the grid; nothing else moves the board.
        released = np.flatnonzero(run.released)
        assert np.allclose(run.displayed[released], grid * np.round(scores[released] / grid))
        if baseline is None:
            assert run.released[0]


def test_fixed_step_releases_only_improvements_beyond_the_step():
    run = lad.ladder([0.50, 0.505, 0.52, 0.521, 0.60], step=0.01, greater_is_better=True)
    assert run.released.tolist() == [True, False, True, False, True]
    assert np.allclose(run.displayed, [0.50, 0.50, 0.52, 0.52, 0.60])


def test_a_loss_board_moves_down():
    run = lad.ladder([0.70, 0.69, 0.60], step=0.05, greater_is_better=False)
    assert run.released.tolist() == [True, False, True]
    assert np.allclose(run.displayed, [0.70, 0.70, 0.60])


def test_the_ladder_starts_from_the_baseline():
    run = lad.ladder([0.51, 0.59], step=0.02, greater_is_better=True, baseline=0.55)
    assert run.released.tolist() == [False, True]
    assert np.allclose(run.displayed, [0.56, 0.58])


def test_the_parameter_free_ladder_starts_from_the_baseline():
    # Against the baseline (shown [0.55] on the grid 1/100) the first submission must beat its
    # paired standard error too: 0.56 is within 0.02 of it, 0.60 is not.
    run = lad.ladder_free(
        [0.56, 0.60], lambda t, best: 0.02, n=100, greater_is_better=True, baseline=0.55
    )
    assert run.released.tolist() == [False, True]
    assert np.allclose(run.displayed, [0.55, 0.60])


@pytest.mark.parametrize("board", ["ladder", "ladder_free"])
def test_an_honest_team_sees_its_real_improvements(board):
    """Each step raises the true accuracy by 3/√n; 30 % of the rows get fresh noise each time."""
    n = 10_000
    delta = 3 / np.sqrt(n)
    released = total = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        quality = 0.55
        latent = rng.random(n)  # a row is right when its latent is below the model's quality
        history = [latent < quality]
        for _ in range(12):
            quality += delta
            churn = rng.random(n) < 0.3
            latent[churn] = rng.random(int(churn.sum()))
            history.append(latent < quality)
        scores = np.array([c.mean() for c in history])
        losses = [1.0 - c for c in history]
        if board == "ladder":
            run = lad.ladder(scores, step=lad.default_step(n), greater_is_better=True)
        else:
            run = lad.ladder_free(
                scores,
                lambda t, best, losses=losses: mean_paired_se(losses[t], losses[best]),
                n=n,
                greater_is_better=True,
            )
        improved = np.flatnonzero(np.diff(scores) > 0) + 1
        released += int(run.released[improved].sum())
        total += improved.size
    assert total > 200
    assert released / total >= 0.95


@pytest.mark.parametrize("metric, exact_floor", [("accuracy", 0.59), ("roc_auc", 0.62)])
def test_the_boosting_attack_climbs_the_exact_board_but_not_the_ladder(metric, exact_floor):
    finals = {"exact": [], "ladder": [], "ladder_free": []}
    for seed in range(20):
        for board, result in boosting_attack(
            n_public=4000, submissions=1000, metric=metric, seed=seed
        ).items():
            finals[board].append(result.final)
    assert np.mean(finals["exact"]) >= exact_floor
    assert min(finals["exact"]) > 0.55
    for board in ("ladder", "ladder_free"):
        assert np.mean(finals[board]) <= 0.532
        assert max(finals[board]) <= 0.532
