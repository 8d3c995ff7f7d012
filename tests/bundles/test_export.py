"""The Codabench v2 exporter: what it writes is a bundle Codabench reads, and Podium reads it back
as the same competition."""

import io
import zipfile
from dataclasses import replace
from datetime import UTC, datetime

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
    Split,
    export_codabench,
    read_bundle,
)
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
