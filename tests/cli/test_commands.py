"""The `podium` command's contract, as other tools run it: its ``main()`` with their arguments
and environment (in this process, tests/cli/inprocess.py), and as a real process where that is
the point."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.inprocess import run_main
from tests.helpers import KEY, PUBLIC_HALF, csv_bytes


def podium(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command with exactly ``env`` (None: this process's), run in this process."""
    return run_main(*args, env=env)


def podium_process(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The same in a process of its own (``python -m app.cli``), for what only a process shows."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "key": tmp_path / "key.csv",
        "sub": tmp_path / "sub.csv",
        "plain_key": tmp_path / "plain_key.csv",
        "labels_key": tmp_path / "labels_key.csv",
        "labels_sub": tmp_path / "labels_sub.csv",
    }
    paths["key"].write_bytes(KEY)
    paths["sub"].write_bytes(PUBLIC_HALF)
    paths["plain_key"].write_bytes(csv_bytes(["id", "target"], ["a", 1], ["b", 0], ["c", 1]))
    paths["labels_key"].write_bytes(
        csv_bytes(["row", "genre"], ["r1", "news"], ["r2", "NA"], ["r3", "fiction"])
    )
    paths["labels_sub"].write_bytes(
        csv_bytes(["genre", "row"], ["news", "r3"], ["NA", "r2"], ["news", "r1"])
    )
    return paths


def _assert_error(
    result: subprocess.CompletedProcess[str], *fragments: str, database: bool = False
) -> None:
    """Exit 2 and one ``error:`` line; ``database``: after the line naming the database opened."""
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    if database:
        assert lines and lines[0].startswith("database: "), result.stderr
        lines = lines[1:]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_score_prints_one_json_object_with_public_and_private(files):
    result = podium("score", "--metric", "roc_auc", str(files["key"]), str(files["sub"]))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out == {
        "metric": "roc_auc",
        "score": pytest.approx(8 / 9),
        "public": 0.5,
        "private": 1.0,
    }


def test_as_a_process_the_command_prints_its_json_and_a_usage_error_exits_2(files):
    # The real process: its exit status and streams (the other tests run the same main()).
    result = podium_process("score", "--metric", "roc_auc", str(files["key"]), str(files["sub"]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["public"] == 0.5
    _assert_error(
        podium_process("score", "--metric", "auc_typo", str(files["key"]), str(files["sub"])),
        "auc_typo",
    )


def test_score_without_usage_has_null_splits(files, tmp_path):
    sub = tmp_path / "s.csv"
    sub.write_bytes(csv_bytes(["id", "target"], ["c", 0.9], ["a", 0.8], ["b", 0.1]))
    out = json.loads(
        podium("score", "--metric", "roc_auc", str(files["plain_key"]), str(sub)).stdout
    )
    assert out == {"metric": "roc_auc", "score": 1.0, "public": None, "private": None}


def test_score_takes_labels_literally_and_columns_in_any_order(files):
    result = podium(
        "score", "--metric", "accuracy", str(files["labels_key"]), str(files["labels_sub"])
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["score"] == pytest.approx(2 / 3)


def test_score_with_explicit_id_column(files, tmp_path):
    key = tmp_path / "k.csv"
    key.write_bytes(csv_bytes(["target", "id"], [1, "a"], [0, "b"]))
    sub = tmp_path / "s.csv"
    sub.write_bytes(csv_bytes(["id", "target"], ["a", 0.2], ["b", 0.1]))
    result = podium("score", "--metric", "roc_auc", "--id-column", "id", str(key), str(sub))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["score"] == 1.0


def test_unknown_metric_exits_2_listing_names(files):
    result = podium("score", "--metric", "auc_typo", str(files["key"]), str(files["sub"]))
    _assert_error(result, "auc_typo", "roc_auc", "rmse")


def test_bad_params_exit_2(files):
    _assert_error(
        podium(
            "score",
            "--metric",
            "rmse",
            "--params",
            '{"power": 3}',
            str(files["key"]),
            str(files["sub"]),
        ),
        "power",
    )
    _assert_error(
        podium(
            "score",
            "--metric",
            "rmse",
            "--params",
            "{not json",
            str(files["key"]),
            str(files["sub"]),
        ),
        "--params",
    )


def test_mismatched_submission_exits_2_naming_ids(files, tmp_path):
    sub = tmp_path / "s.csv"
    sub.write_bytes(csv_bytes(["id", "target"], ["a", 0.5], ["zz", 0.5]))
    _assert_error(podium("score", "--metric", "roc_auc", str(files["key"]), str(sub)), "'zz'")


def test_missing_file_exits_2(files, tmp_path):
    _assert_error(
        podium("score", "--metric", "roc_auc", str(files["key"]), str(tmp_path / "nope.csv")),
        "not found",
    )


def test_malformed_answer_key_exits_2(files, tmp_path):
    key = tmp_path / "k.csv"
    key.write_bytes(b"\xff\xfe\x00garbage")
    _assert_error(podium("score", "--metric", "roc_auc", str(key), str(files["sub"])), "answer key")


def test_details_flag_adds_details_only_when_asked(files):
    plain = json.loads(
        podium(
            "score", "--metric", "accuracy", str(files["labels_key"]), str(files["labels_sub"])
        ).stdout
    )
    assert "details" not in plain


def test_metrics_lists_the_catalogue():
    result = podium("metrics", "--json")
    assert result.returncode == 0, result.stderr
    catalogue = {m["name"]: m for m in json.loads(result.stdout)}
    assert {"accuracy", "roc_auc", "rmse"} <= set(catalogue)
    assert catalogue["roc_auc"]["direction"] == "maximize"
    assert catalogue["rmse"]["direction"] == "minimize"
    assert "id column" in catalogue["rmse"]["columns"]
    assert {"name": "label", "required": True, "default": None} in catalogue["class_f1"]["params"]
    table = podium("metrics")
    assert table.returncode == 0 and "roc_auc" in table.stdout


def test_users_create_prints_a_token_once_and_stores_only_its_hash(tmp_path):
    import os

    db = tmp_path / "cli.db"
    env = {**os.environ, "PODIUM_DATABASE_URL": f"sqlite:///{db}", "PODIUM_DATA_DIR": str(tmp_path)}
    result = podium("users", "create", "grace", "--organiser", "--create", env=env)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert token.startswith("pdm_") and len(token) > 30
    assert token.encode() not in db.read_bytes()
    again = podium("users", "create", "grace", env=env)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_users_create_admin_makes_a_site_admin(tmp_path):
    import os
    import sqlite3

    db = tmp_path / "cli.db"
    env = {**os.environ, "PODIUM_DATABASE_URL": f"sqlite:///{db}", "PODIUM_DATA_DIR": str(tmp_path)}
    result = podium("users", "create", "root", "--admin", "--create", env=env)
    assert result.returncode == 0, result.stderr
    assert podium("users", "create", "ada", "--organiser", env=env).returncode == 0
    with sqlite3.connect(db) as conn:
        roles = dict(conn.execute("SELECT name, role FROM users").fetchall())
    assert roles == {"root": "admin", "ada": "organiser"}


# `podium users`: tokens issued, rotated, listed by count and revoked, never printed twice.


@pytest.fixture
def users_env(tmp_path: Path) -> dict[str, str]:
    import os

    env = {
        **os.environ,
        "PODIUM_DATABASE_URL": f"sqlite:///{tmp_path}/users.db",
        "PODIUM_DATA_DIR": str(tmp_path / "data"),
        "PODIUM_SECRET_KEY": "cli-test-secret",
    }
    migrated = podium("migrate", env=env)  # the users commands create no database themselves
    assert migrated.returncode == 0, migrated.stderr
    return env


def _live_tokens(env: dict[str, str]) -> dict[str, str]:
    listing = podium("users", "list", env=env)
    assert listing.returncode == 0, listing.stderr
    assert "pdm_" not in listing.stdout
    rows = [line.split() for line in listing.stdout.splitlines()[1:]]
    return {name: count for name, _role, count in rows}


def _works(env: dict[str, str], token: str) -> bool:
    from sqlalchemy import select

    from app.auth.tokens import hash_token
    from app.db import make_engine
    from app.models import ApiToken

    engine = make_engine(env["PODIUM_DATABASE_URL"])
    with engine.connect() as conn:
        row = conn.execute(
            select(ApiToken.revoked_at).where(
                ApiToken.token_hash == hash_token(token, secret_key=env["PODIUM_SECRET_KEY"])
            )
        ).one_or_none()
    engine.dispose()
    return row is not None and row[0] is None


def test_users_token_issues_another_and_rotate_revokes_the_old_ones(users_env):
    first = podium("users", "create", "ada", env=users_env).stdout.strip()
    podium("users", "create", "host", "--organiser", env=users_env)
    second = podium("users", "token", "ada", env=users_env)
    assert second.returncode == 0, second.stderr
    second_token = second.stdout.strip()
    assert second_token.startswith("pdm_") and second_token != first
    assert _works(users_env, first) and _works(users_env, second_token)
    assert _live_tokens(users_env) == {"ada": "2", "host": "1"}

    rotated = podium("users", "token", "ada", "--rotate", env=users_env).stdout.strip()
    assert not _works(users_env, first) and not _works(users_env, second_token)
    assert _works(users_env, rotated)
    assert _live_tokens(users_env)["ada"] == "1"


def test_users_revoke_revokes_every_live_token_of_that_user_only(users_env):
    ada = podium("users", "create", "ada", env=users_env).stdout.strip()
    grace = podium("users", "create", "grace", env=users_env).stdout.strip()
    result = podium("users", "revoke", "ada", env=users_env)
    assert result.returncode == 0 and "revoked 1 token(s)" in result.stdout
    assert not _works(users_env, ada) and _works(users_env, grace)
    assert _live_tokens(users_env) == {"ada": "0", "grace": "1"}


def test_users_commands_name_an_unknown_user(users_env):
    for args in (("token", "nobody"), ("revoke", "nobody")):
        _assert_error(podium("users", *args, env=users_env), "nobody", database=True)


# Usage errors are the same one `error:` line with exit 2 as every other error.


@pytest.mark.parametrize(
    "args,fragment",
    [
        (("score", "KEY", "SUB"), "--metric"),  # a missing option
        (("score", "--metric", "roc_auc", "KEY"), "submission"),  # a missing argument
        (("score", "--metric", "roc_auc", "--bogus", "KEY", "SUB"), "--bogus"),  # unknown option
        (("metrics", "--jsn"), "--jsn"),
        (("users", "revoke", "ada", "--token-id", "abc"), "--token-id"),  # a bad value
    ],
)
def test_usage_errors_are_one_error_line_and_exit_2(files, args, fragment):
    paths = {"KEY": str(files["key"]), "SUB": str(files["sub"])}
    result = podium(*(paths.get(a, a) for a in args))
    _assert_error(result, fragment)
    assert "╭" not in result.stderr and "Usage:" not in result.stderr


def test_swapped_files_are_named_as_swapped(files):
    result = podium("score", "--metric", "roc_auc", str(files["sub"]), str(files["key"]))
    _assert_error(result, "Usage", "swapped")


# Labels: scikit-learn's semantics unless --labels names the label set.


@pytest.fixture
def hamster(tmp_path: Path) -> dict[str, Path]:
    key = tmp_path / "pets_key.csv"
    key.write_bytes(csv_bytes(["id", "pet"], ["a", "cat"], ["b", "dog"], ["c", "fish"]))
    sub = tmp_path / "pets_sub.csv"
    sub.write_bytes(csv_bytes(["id", "pet"], ["a", "cat"], ["b", "dog"], ["c", "hamster"]))
    return {"key": key, "sub": sub}


def test_without_labels_an_unknown_label_is_a_class_as_in_scikit_learn(hamster):
    result = podium("score", "--metric", "macro_f1", str(hamster["key"]), str(hamster["sub"]))
    assert result.returncode == 0, result.stderr
    # cat, dog, fish, hamster: two perfect classes of four.
    assert json.loads(result.stdout)["score"] == pytest.approx(0.5)


@pytest.mark.parametrize("labels", ['["cat", "dog", "fish"]', "cat,dog,fish"])
def test_with_labels_a_label_outside_them_is_an_error(hamster, labels):
    result = podium(
        "score",
        "--metric",
        "macro_f1",
        "--labels",
        labels,
        str(hamster["key"]),
        str(hamster["sub"]),
    )
    _assert_error(result, "submission", "'hamster' in 1 row(s)")


def test_with_labels_that_hold_every_label_the_score_is_unchanged(hamster):
    result = podium(
        "score",
        "--metric",
        "macro_f1",
        "--labels",
        "cat,dog,fish,hamster",
        str(hamster["key"]),
        str(hamster["sub"]),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["score"] == pytest.approx(0.5)


def test_labels_for_a_numeric_metric_are_an_error(files):
    result = podium(
        "score", "--metric", "roc_auc", "--labels", "0,1", str(files["key"]), str(files["sub"])
    )
    _assert_error(result, "single-label")
