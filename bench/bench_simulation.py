"""Benchmark of simulation competitions: ConnectX episodes per minute, and how many episodes a
rating table needs to find the agents' true order.

1. **Throughput**: the same ConnectX episodes between two simple agents (each plays a random free
   column), played
   - by ``kaggle-environments`` in one process with no jail (``Environment.run`` on the agents'
     functions): the floor, what no isolation costs;
   - by Podium (:func:`app.simulation.episode.run_episode`): each agent in its own jail for the
     whole episode, ``--workers`` episodes side by side (the code lane's threads).
   It prints episodes per minute for both and their ratio (the goal: at least 0.5).
2. **Convergence**: 64 agents of known skill (agent i beats agent j with the logistic
   probability of their skill difference, draws never) play the ladder as Podium schedules it
   (:mod:`app.simulation.ladder`, openskill's Weng–Lin ratings), no jail: it prints after how many
   episodes the board's order (μ − kσ) first reaches a Spearman rank correlation of 0.9 with the
   true order, and where it stands at the end.
3. **Fair share**: in that same ladder, how many episodes each agent played (least, median, most,
   and the most over the least), when the correlation was first reached and at the end: the
   scheduler should give every agent a like share, whatever its skill.

    python bench/bench_simulation.py                         # 40 episodes, 2 workers
    python bench/bench_simulation.py --episodes 100 --workers 2 --agents 64
"""

import argparse
import math
import random
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.simulation.environments import EnvironmentConfig  # noqa: E402
from app.simulation.episode import run_episode  # noqa: E402
from app.simulation.jailed import AgentLimits  # noqa: E402
from app.simulation.ladder import Entrant, choose  # noqa: E402
from app.simulation.ratings import MU0, SIGMA0, Skill, rate  # noqa: E402

AGENT = """
import random

def act(observation, configuration):
    free = [c for c in range(configuration.columns) if observation.board[c] == 0]
    return random.choice(free)
"""


def _agent(observation, configuration):  # type: ignore[no-untyped-def]
    free = [c for c in range(configuration.columns) if observation.board[c] == 0]
    return random.choice(free)


def floor(episodes: int) -> float:
    """Episodes per minute of kaggle-environments alone, one process, no jail."""
    import kaggle_environments

    began = time.perf_counter()
    for _ in range(episodes):
        env = kaggle_environments.make("connectx")
        env.run([_agent, _agent])
    return episodes / (time.perf_counter() - began) * 60


def jailed(episodes: int, workers: int) -> float:
    """Episodes per minute of Podium's episodes, each agent in its own jail."""
    root = Path(tempfile.mkdtemp(prefix="podium-bench-sim-"))
    root.chmod(0o755)
    try:
        folder = root / "agent"
        folder.mkdir(mode=0o755)
        (folder / "main.py").write_text(AGENT)
        (folder / "main.py").chmod(0o644)
        config = EnvironmentConfig(name="connectx")
        run_episode(config, [folder, folder], AgentLimits())  # warm: imports, the jail's check
        began = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            done = list(
                pool.map(
                    lambda _: run_episode(config, [folder, folder], AgentLimits()),
                    range(episodes),
                )
            )
        seconds = time.perf_counter() - began
        failed = [a.status for o in done for a in o.agents if a.failed]
        if failed:
            raise SystemExit(f"some agents failed: {failed[:5]}")
        return episodes / seconds * 60
    finally:
        shutil.rmtree(root, ignore_errors=True)


def spearman(a: list[float], b: list[float]) -> float:
    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        for rank, i in enumerate(order):
            out[i] = float(rank)
        return out

    ra, rb = ranks(a), ranks(b)
    n = len(a)
    d = sum((x - y) ** 2 for x, y in zip(ra, rb, strict=True))
    return 1 - 6 * d / (n * (n * n - 1))


def convergence(
    agents: int, max_episodes: int, k: float, seed: int
) -> tuple[int | None, float, list[int] | None, list[int]]:
    """Episodes until the board's order reaches rank correlation 0.9 with the truth, the final
    correlation, and each agent's episodes then and at the end."""
    rng = random.Random(seed)
    truth = [i * 4.0 / agents for i in range(agents)]  # skills 0 .. 4 logits apart
    skills = [Skill(MU0, SIGMA0) for _ in range(agents)]
    played = [0] * agents
    reached, share_then = None, None
    for episode in range(1, max_episodes + 1):
        entrants = [Entrant(i, i, skills[i].mu, skills[i].sigma, played[i]) for i in range(agents)]
        seats = choose(entrants, 2, rng, explore=0.1)
        assert seats is not None
        a, b = seats[0].submission_id, seats[1].submission_id
        p = 1 / (1 + math.exp(truth[b] - truth[a]))
        rewards: list[float | None] = [1, -1] if rng.random() < p else [-1, 1]
        skills[a], skills[b] = rate([skills[a], skills[b]], rewards)
        played[a] += 1
        played[b] += 1
        if episode % 50 == 0:
            rho = spearman([s.conservative(k) for s in skills], truth)
            if reached is None and rho >= 0.9:
                reached, share_then = episode, list(played)
    return reached, spearman([s.conservative(k) for s in skills], truth), share_then, played


def spread(played: list[int]) -> str:
    ordered = sorted(played)
    least, most = ordered[0], ordered[-1]
    ratio = f"{most / least:.2f}" if least else "inf"
    return f"least {least}, median {ordered[len(ordered) // 2]}, most {most} (most/least {ratio})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--agents", type=int, default=64)
    parser.add_argument("--rating-episodes", type=int, default=20_000)
    parser.add_argument("--k", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    base = floor(args.episodes)
    ours = jailed(args.episodes, args.workers)
    print(f"ConnectX, {args.episodes} episodes of two random agents")
    print(f"  kaggle-environments, one process, no jail: {base:8.0f} episodes/min")
    print(f"  Podium, each agent jailed, {args.workers} workers: {ours:8.0f} episodes/min")
    print(f"  ratio: {ours / base:.2f} (goal: at least 0.5)")
    reached, final, then, played = convergence(args.agents, args.rating_episodes, args.k, args.seed)
    print(
        f"Ratings, {args.agents} agents of known skill, ladder as scheduled, board mu - {args.k:g} sigma"
    )
    if reached is None:
        print(f"  rank correlation 0.9 not reached in {args.rating_episodes} episodes")
    else:
        print(
            f"  rank correlation >= 0.9 after {reached} episodes ({reached / args.agents:.0f} per agent)"
        )
    print(f"  after {args.rating_episodes} episodes: {final:.3f}")
    print("Fair share, episodes per agent (each episode seats two)")
    if then is not None:
        print(f"  when 0.9 was reached: {spread(then)}")
    print(f"  after {args.rating_episodes} episodes: {spread(played)}")


if __name__ == "__main__":
    main()
