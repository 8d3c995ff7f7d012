"""``podium simulate-attack``: run the boosting attack against a board a host is considering."""

import json
import sys
from enum import StrEnum
from typing import Annotated

import numpy as np
import typer


class BoardChoice(StrEnum):
    exact = "exact"
    ladder = "ladder"
    ladder_free = "ladder_free"
    all = "all"


class MetricChoice(StrEnum):
    accuracy = "accuracy"
    roc_auc = "roc_auc"


def simulate_attack(
    board: Annotated[
        BoardChoice, typer.Option(help="The public board to attack.")
    ] = BoardChoice.all,
    n_public: Annotated[int, typer.Option("--n-public", help="Rows in the public split.")] = 4000,
    submissions: Annotated[int, typer.Option(help="Submissions the attacker makes.")] = 1000,
    metric: Annotated[
        MetricChoice, typer.Option(help="The board's metric.")
    ] = MetricChoice.accuracy,
    step: Annotated[
        float | None, typer.Option(help="The Ladder's step (default 1/√n_public).")
    ] = None,
    seeds: Annotated[int, typer.Option(help="Independent runs to average.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Simulate Blum & Hardt's boosting attack on pure-noise labels and print how far the
    attacker's final submission climbs above chance (0.5) on the public split."""
    from app.honest.engine.attack import BOARDS, boosting_attack

    problems = []
    if n_public < 10:
        problems.append("--n-public must be at least 10")
    if not 1 <= submissions <= 100_000:
        problems.append("--submissions must be between 1 and 100000")
    if not 1 <= seeds <= 1000:
        problems.append("--seeds must be between 1 and 1000")
    if step is not None and not 0 < step < 1:
        problems.append("--step must be between 0 and 1")
    if problems:
        sys.stderr.write("error: " + "; ".join(problems) + "\n")
        raise typer.Exit(code=2)
    boards = BOARDS if board is BoardChoice.all else (board.value,)
    finals: dict[str, list[float]] = {b: [] for b in boards}
    released: dict[str, list[int]] = {b: [] for b in boards}
    for seed in range(seeds):
        results = boosting_attack(
            n_public=n_public,
            submissions=submissions,
            metric=metric.value,
            boards=boards,  # type: ignore[arg-type]
            seed=seed,
            step=step,
        )
        for name, result in results.items():
            finals[name].append(result.final)
            released[name].append(result.released)
    rows = [
        {
            "board": name,
            "metric": metric.value,
            "n_public": n_public,
            "submissions": submissions,
            "seeds": seeds,
            "final_mean": float(np.mean(finals[name])),
            "final_min": float(np.min(finals[name])),
            "final_max": float(np.max(finals[name])),
            "released_mean": float(np.mean(released[name])),
        }
        for name in boards
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    typer.echo(
        f"boosting attack: {submissions} submissions on {n_public} pure-noise public labels "
        f"({metric.value}, {seeds} seeds); chance is 0.5"
    )
    typer.echo(f"{'board':<12} {'final mean':>10} {'min':>8} {'max':>8} {'releases':>9}")
    for row in rows:
        typer.echo(
            f"{row['board']:<12} {row['final_mean']:>10.4f} {row['final_min']:>8.4f} "
            f"{row['final_max']:>8.4f} {row['released_mean']:>9.1f}"
        )
