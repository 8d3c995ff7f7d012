"""The pure parts: Kaggle's rewards as ranks, Weng-Lin moving the right way, the ladder's fair
share and its choice of similar skill, and a host environment's zip refused for each fault."""

import io
import random
import zipfile

import pytest

from app.simulation.hosted import InvalidEnvironment, read_environment
from app.simulation.ladder import Entrant, choose
from app.simulation.ratings import MU0, SIGMA0, Skill, ranks, rate


def test_rewards_rank_higher_first_ties_shared_and_failures_last():
    assert ranks([1, -1]) == [1, 2]
    assert ranks([0, 0]) == [1, 1]
    assert ranks([None, 0]) == [2, 1]
    assert ranks([3, None, 3, 1]) == [1, 3, 1, 2]


def test_a_win_raises_the_winner_and_lowers_the_loser_and_both_grow_surer():
    winner, loser = rate([Skill(MU0, SIGMA0), Skill(MU0, SIGMA0)], [1, -1])
    assert winner.mu > MU0 > loser.mu
    assert winner.sigma < SIGMA0 and loser.sigma < SIGMA0
    upset, favourite = rate([Skill(20, 2), Skill(30, 2)], [1, -1])
    expected, _ = rate([Skill(30, 2), Skill(20, 2)], [1, -1])
    assert upset.mu - 20 > expected.mu - 30  # beating a stronger agent moves more


def test_the_least_played_agent_takes_a_seat_and_meets_one_of_similar_skill():
    rng = random.Random(7)
    entrants = [Entrant(i, i, float(i), 1.0, 5) for i in range(20)]
    entrants[3] = Entrant(3, 3, 3.0, 1.0, 0)  # new: it plays first
    for _ in range(50):
        seats = choose(entrants, 2, rng, explore=0.0, window=4)
        assert seats is not None
        ids = {s.submission_id for s in seats}
        assert 3 in ids
        [other] = ids - {3}
        assert abs(other - 3) <= 2  # among the four closest
    assert choose(entrants[:1], 2, rng) is None


def test_agents_of_the_first_seats_team_are_taken_only_when_no_other_is_left():
    rng = random.Random(1)
    entrants = [Entrant(1, 10, 25, 8, 0), Entrant(2, 10, 25, 8, 1), Entrant(3, 20, 40, 8, 1)]
    for _ in range(20):
        seats = choose(entrants, 2, rng, explore=0.0)
        assert seats is not None and {s.team_id for s in seats} == {10, 20}


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


SPEC = b'{"name": "g", "agents": [2]}'


@pytest.mark.parametrize(
    ("files", "words"),
    [
        ({"g.py": b""}, "exactly one <name>.json"),
        ({"g.json": SPEC}, "no g.py"),
        ({"g.json": b"{", "g.py": b""}, "g.json is not JSON"),
        ({"g.json": b'{"name": "g"}', "g.py": b""}, "no 'agents' list"),
        ({"dir/g.json": SPEC, "g.py": b""}, "at the zip's root"),
        ({"g.json": SPEC, "g.py": b"", "g.sh": b""}, "at the zip's root"),
        ({"g.json": SPEC, "g.py": b"\0" * (17 * 1024**2)}, "unpack to more than"),
        ({f"f{i}.js": b"" for i in range(21)}, "at most 20"),
    ],
)
def test_a_host_environment_zip_is_refused_naming_the_fault(files, words):
    with pytest.raises(InvalidEnvironment, match=words.replace("(", r"\(")):
        read_environment(_zip(files))


def test_a_host_environment_zip_unpacks_readable_by_the_jail(tmp_path):
    assert read_environment(_zip({"g.json": SPEC, "g.py": b"x = 1\n"}), tmp_path) == "g"
    assert (tmp_path / "g.py").read_bytes() == b"x = 1\n"
    assert (tmp_path / "g.json").stat().st_mode & 0o004
    with pytest.raises(InvalidEnvironment, match="must be a .zip"):
        read_environment(b"not a zip")
