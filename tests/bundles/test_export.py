"""The Codabench v2 exporter: what it writes is a bundle Codabench reads, and Podium reads it back
as the same competition."""

import io
import runpy
import zipfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import yaml

from app.bundles import (
    BundleFile,
    Column,
    Competition,
    Computed,
    EntryField,
    MetricRef,
    Page,
    Phase,
    Program,
    Split,
    export_codabench,
    read_bundle,
)
from app.bundles.runner import coda_layout, map_coda_scores, materialise, parse_scores
from app.bundles.standalone import score as standalone
from app.metrics.registry import get_metric
from tests.bundles.builders import codabench_files, codalab_files, evalai_files, make_zip

KEY = b"id,target,Usage\n1,0.5,Public\n2,1.5,Private\n3,2.0,Public\n4,3.0,Private\n5,9.0,Ignored\n"


def catalogue_competition() -> Competition:
    columns = (
        Column(
            key="rmse", title="RMSE", direction="minimize", precision=4, metric=MetricRef("rmse")
        ),
        Column(key="mae", title="MAE", direction="minimize", metric=MetricRef("mae")),
        Column(
            key="both",
            title="Mean error",
            direction="minimize",
            computed=Computed("mean", ("rmse", "mae")),
        ),
    )
    return Competition(
        title="House prices",
        slug="house-prices",
        description=Page(title="Overview", content="Predict **prices**.", format="markdown"),
        pages=(
            Page(title="Evaluation", content="<p>RMSE</p>", kind="evaluation"),
            Page(title="Rules", content="Be fair.", format="markdown", kind="terms"),
            Page(title="Data", content="<p>CSV</p>", kind="data"),
        ),
        columns=columns,
        ranking="rmse",
        phases=(
            Phase(
                name="dev",
                title="Development",
                start=datetime(2026, 1, 1, tzinfo=UTC),
                end=datetime(2026, 3, 1, 12, 30, tzinfo=UTC),
                description="Public key.",
                daily_submission_limit=10,
                total_submission_limit=None,
                board="public",
                counts="best",
                final_selection_limit=2,
                entry_fields=(
                    EntryField("method_name", "Method name", required=True, on_board=True),
                    EntryField("data", "External data", type="choice", options=("none", "some")),
                ),
                splits=(
                    Split("public", "Public", "public"),
                    Split("private", "Private", "private"),
                ),
                answer_key=(BundleFile("key.csv", KEY),),
                execution_time_limit=300,
            ),
            Phase(
                name="final",
                title="Final",
                start=datetime(2026, 3, 2, tzinfo=UTC),
                end=None,
                daily_submission_limit=2,
                total_submission_limit=20,
                board="blind",
                counts="last",
                columns=(columns[1],),
                ranking="mae",
                answer_key=(BundleFile("key.csv", KEY),),
            ),
        ),
        source_format="codabench",
    )


def round_trip(competition: Competition) -> Competition:
    back = read_bundle(export_codabench(competition).data, name="export.zip")
    return replace(back, warnings=())


def test_a_catalogue_competition_reads_back_the_same() -> None:
    competition = catalogue_competition()
    assert round_trip(competition) == competition


def test_the_export_is_what_codabench_reads() -> None:
    export = export_codabench(catalogue_competition())
    archive = zipfile.ZipFile(io.BytesIO(export.data))
    config = yaml.safe_load(archive.read("competition.yaml"))
    assert config["version"] == 2
    assert config["image"] in archive.namelist()
    assert config["terms"] in archive.namelist()
    for task in config["tasks"]:
        program = task["scoring_program"]
        assert f"{program}/metadata.yaml" in archive.namelist()
        assert f"{task['reference_data']}/key.csv" in archive.namelist()
    assert [p["start"] for p in config["phases"]] == [
        "2026-01-01T00:00:00Z",
        "2026-03-02T00:00:00Z",
    ]
    assert config["phases"][1]["end"] is None
    board = config["leaderboards"][0]
    assert [(c["key"], c["sorting"], c["index"]) for c in board["columns"]] == [
        ("rmse", "asc", 0),
        ("mae", "asc", 1),
        ("both", "asc", 2),
    ]
    assert board["columns"][2]["computation"] == "avg"
    assert board["columns"][2]["computation_indexes"] == [0, 1]
    assert board["submission_rule"] == "Force_Best"
    assert any("blind" in w for w in export.warnings)


@pytest.mark.parametrize(
    "files",
    [evalai_files(), codabench_files(), codalab_files()],
    ids=["evalai", "codabench", "codalab"],
)
def test_an_imported_bundle_reads_back_the_same_after_export(files: dict[str, bytes | str]) -> None:
    imported = replace(read_bundle(make_zip(files)), warnings=())
    assert round_trip(imported) == imported


def test_answer_key_checksums_survive_the_round_trip() -> None:
    imported = read_bundle(make_zip(codabench_files()))
    back = round_trip(imported)
    assert [f.sha256 for p in back.phases for f in p.answer_key] == [
        f.sha256 for p in imported.phases for f in p.answer_key
    ]


def test_a_metric_without_a_numpy_version_is_named_on_export() -> None:
    competition = catalogue_competition()
    odd = Column(
        key="qwk", title="QWK", direction="maximize", metric=MetricRef("quadratic_weighted_kappa")
    )
    competition = replace(competition, columns=(*competition.columns, odd))
    assert any("quadratic_weighted_kappa" in w for w in export_codabench(competition).warnings)


def test_the_exported_scorer_gives_the_catalogue_s_scores() -> None:
    rng = np.random.default_rng(7)
    n = 40
    truth = rng.normal(size=n) + 3
    labels = (rng.random(n) > 0.5).astype(float)
    pred = truth + rng.normal(scale=0.3, size=n)
    prob = np.clip(labels * 0.6 + rng.random(n) * 0.4, 0, 1)
    prob[3] = prob[4]  # a tie for the ranks
    cases = {
        "rmse": (truth, pred),
        "mae": (truth, pred),
        "r2": (truth, pred),
        "rmsle": (truth, pred),
        "log_loss_binary": (labels, prob),
        "roc_auc": (labels, prob),
    }
    assert set(cases) == set(standalone.METRICS)
    for name, (y, p) in cases.items():
        key = "id,target\n" + "".join(f"{i},{float(v)!r}\n" for i, v in enumerate(y))
        sub = "id,prediction\n" + "".join(f"{i},{float(v)!r}\n" for i, v in enumerate(p))
        config = {"columns": [{"key": name, "metric": name, "params": {}}]}
        got = standalone.score(config, key.encode(), sub.encode())[name]
        metric = get_metric(name)
        expected = metric.score(y, p, params=metric.parse_params({}), extra={})
        assert got == pytest.approx(expected, rel=1e-12), name


def test_the_exported_scorer_splits_public_private_and_ignores_ignored_rows() -> None:
    sub = b"id,prediction\n1,1.5\n2,1.5\n3,2.0\n4,4.0\n5,0\n"
    scores = standalone.score({"columns": [{"key": "mae", "metric": "mae"}]}, KEY, sub)
    assert scores == {"mae": pytest.approx(0.5), "mae__private": pytest.approx(0.5)}


def test_the_exported_program_scores_a_submission_through_the_codabench_layout(
    tmp_path: Path,
) -> None:
    """Export, lay the program out as Codabench would, run our own score.py in-process (it is
    Podium's code, not a bundle's), read scores.json as an imported program's: the catalogue's
    numbers for the same submission."""
    competition = catalogue_competition()
    archive = zipfile.ZipFile(io.BytesIO(export_codabench(competition).data))
    config = yaml.safe_load(archive.read("competition.yaml"))
    program_dir = config["tasks"][0]["scoring_program"]
    files = tuple(
        BundleFile(name[len(program_dir) + 1 :], archive.read(name))
        for name in archive.namelist()
        if name.startswith(program_dir + "/")
    )
    program = Program(
        kind="codabench",
        files=files,
        command=yaml.safe_load(archive.read(f"{program_dir}/metadata.yaml"))["command"],
    )
    submission = b"id,prediction\n1,1.0\n2,1.0\n3,2.5\n4,2.0\n5,7.0\n"
    layout = coda_layout(
        program,
        competition.phases[0].answer_key,
        submission,
        submission_name="sub.csv",
        root=str(tmp_path),
    )
    materialise(layout, tmp_path)
    assert layout.argv[:2] == ("python3", f"{tmp_path}/program/score.py")
    standalone.main(["score.py", layout.argv[2], layout.argv[3]], here=str(tmp_path / "program"))
    raw, notes = parse_scores({"scores.json": (tmp_path / "output" / "scores.json").read_bytes()})
    columns = tuple(
        replace(c, metric=None, source_key=c.key) if c.metric else c for c in competition.columns
    )
    scores = map_coda_scores(raw, columns=columns).scores
    rmse = get_metric("rmse")
    public = rmse.score(
        np.array([0.5, 2.0]), np.array([1.0, 2.5]), params=rmse.parse_params({}), extra={}
    )
    assert scores["rmse"]["public"] == pytest.approx(public)
    assert scores["mae"]["public"] == pytest.approx(0.5)
    assert scores["both"]["public"] == pytest.approx((public + 0.5) / 2)
    assert notes == ()


def test_an_exported_evalai_script_runs_under_its_codabench_wrapper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wrapper calls evaluate() as EvalAI did and writes the public split's values under the
    labels. The evaluate() here is the test's own, run in-process."""
    script = {
        "__init__.py": "from .main import evaluate\n",
        "main.py": (
            "from .helpers import half\n\n"
            "def evaluate(annotation, submission, phase_codename, submission_metadata=None):\n"
            "    with open(annotation) as a, open(submission) as s:\n"
            "        assert phase_codename == 'test'\n"
            "        return {'result': [{'train_split': {'Metric1': half(len(s.read())), 'Total': 1.0}},\n"
            "                           {'test_split': {'Metric1': 0.0, 'Total': len(a.read())}}]}\n"
        ),
        "helpers.py": "def half(x):\n    return x / 2\n",
    }
    competition = read_bundle(make_zip(evalai_files(script=script)))
    archive = zipfile.ZipFile(io.BytesIO(export_codabench(competition).data))
    config = yaml.safe_load(archive.read("competition.yaml"))
    task = config["tasks"][1]  # the test phase
    program_dir = task["scoring_program"]
    for name in archive.namelist():
        for prefix, target in ((program_dir, "program"), (task["reference_data"], "input/ref")):
            if name.startswith(prefix + "/"):
                path = tmp_path / target / name[len(prefix) + 1 :]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(archive.read(name))
    (tmp_path / "input/res").mkdir(parents=True)
    (tmp_path / "input/res/answer.json").write_text("12345678")
    monkeypatch.setattr("sys.argv", ["score.py", str(tmp_path / "input"), str(tmp_path / "output")])
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    monkeypatch.setattr("sys.modules", dict(__import__("sys").modules))
    runpy.run_path(str(tmp_path / "program/score.py"), run_name="__main__")
    raw, _ = parse_scores({"scores.json": (tmp_path / "output/scores.json").read_bytes()})
    assert raw == {
        "Metric1": 4.0,
        "Total": 1.0,
        "Metric1__test_split": 0.0,
        "Total__test_split": 32.0,  # len(the test annotation file)
    }
