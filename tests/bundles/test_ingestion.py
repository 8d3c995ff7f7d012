"""A phase with an ingestion program runs code submissions as Codabench's compute worker does: a
Codabench v2 bundle in the shape of its wheat-seeds and iris examples (an ingestion program that
imports the participant's ``model.py`` from ``$submission_program``, fits it on the input data's
training set, predicts its test set and writes the predictions to ``$output``; a scoring program
hard-coding ``/app/input/ref`` and ``/app/input/res``) is imported, and submissions go through the
API into the real jail: a code zip runs the ingestion then the scoring program, a results zip is
scored directly, a failing model fails with a short message, and a model reaching for the answer
key finds nothing (the attack first tried outside the jail, where it works: the control)."""

import io
import json
import os
import subprocess
import sys
import textwrap
import uuid
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select

from app.auth.service import set_password
from app.bundles import export_codabench, read_bundle
from app.models import Competition, Phase, User
from tests.asgi_client import TestClient
from tests.bundles.builders import CODALAB_CONFIG, codalab_files, dedent, make_zip
from tests.bundles.test_import_api import import_bundle
from tests.bundles.test_program_scoring import board, jail, opened, submitted
from tests.conftest import Caller
from tests.helpers import API
from tests.web.conftest import PASSWORD, WebClient

__all__ = ["jail"]  # the fixture, used by name

SECRET = f"answer-key-{uuid.uuid4().hex}"

CONFIG = dedent(
    """
    version: 2
    title: Classify Points
    description: Two clusters of points, classified by your model.
    image: logo.png
    registration_auto_approve: True
    docker_image: codalab/codalab-legacy:py312
    terms: pages/terms.md
    pages:
      - title: Participation
        file: pages/participate.md
    tasks:
      - index: 0
        name: Points Development Task
        description: 'Train on 6 points, predict 4'
        input_data: dev_phase/input_data/
        reference_data: dev_phase/reference_data/
        ingestion_program: ingestion_program/
        scoring_program: scoring_program/
    solutions:
      - index: 0
        tasks:
        - 0
        path: solution/
    phases:
      - index: 0
        name: Development Phase
        description: 'Development phase: tune your models.'
        start: 1-1-2020
        execution_time_limit: 300
        tasks:
          - 0
    leaderboards:
      - title: Results
        key: main
        submission_rule: "Force_Last"
        columns:
          - title: Prediction score
            key: accuracy
            index: 0
            sorting: desc
          - title: Duration
            key: duration
            index: 1
            sorting: asc
            hidden: true
    """
)

# Codabench's iris example's command, its ingestion shaped like the wheat-seeds one.
INGESTION_METADATA = (
    "command: python $ingestion_program/ingestion.py $input $output $ingestion_program "
    "$submission_program\n"
)
INGESTION = dedent(
    """
    import json
    import os
    import sys
    import time

    import numpy as np

    input_dir, output_dir, program_dir, submission_dir = sys.argv[1:5]
    sys.path.append(program_dir)
    sys.path.append(submission_dir)


    def main():
        from model import Model
        print('Reading Data')
        X_train = np.genfromtxt(os.path.join(input_dir, 'training_data'))
        y_train = np.genfromtxt(os.path.join(input_dir, 'training_label'))
        X_test = np.genfromtxt(os.path.join(input_dir, 'testing_data'))
        start = time.time()
        m = Model()
        print('Training Model')
        m.fit(X_train, y_train)
        print('Running Prediction')
        prediction = m.predict(X_test)
        duration = time.time() - start
        np.savetxt(os.path.join(output_dir, 'prediction'), prediction)
        with open(os.path.join(output_dir, 'metadata.json'), 'w+') as f:
            json.dump({'duration': duration}, f)
        print('Ingestion Program finished. Moving on to scoring')


    if __name__ == '__main__':
        main()
    """
)
SCORING = dedent(
    """
    import json
    import os

    import numpy as np
    from sklearn.metrics import accuracy_score

    reference_dir = os.path.join('/app/input/', 'ref')
    prediction_dir = os.path.join('/app/input/', 'res')
    score_dir = '/app/output/'

    prediction = np.genfromtxt(os.path.join(prediction_dir, 'prediction'))
    truth = np.genfromtxt(os.path.join(reference_dir, 'testing_label'))
    duration = -1
    if os.path.exists(os.path.join(prediction_dir, 'metadata.json')):
        with open(os.path.join(prediction_dir, 'metadata.json')) as f:
            duration = json.load(f).get('duration', -1)
    scores = {'accuracy': accuracy_score(truth, prediction), 'duration': duration}
    print(scores)
    with open(os.path.join(score_dir, 'scores.json'), 'w') as score_file:
        score_file.write(json.dumps(scores))
    """
)
# Nearest centroid, numpy only: predicts 0, 0, 1, 1 for the four test points.
MODEL = dedent(
    """
    import numpy as np


    class Model:
        def fit(self, X, y):
            self.classes = np.unique(y)
            self.centroids = np.array([X[y == c].mean(axis=0) for c in self.classes])

        def predict(self, X):
            distances = ((X[:, None, :] - self.centroids[None]) ** 2).sum(axis=2)
            return self.classes[distances.argmin(axis=1)]
    """
)


def bundle_files(config: str = CONFIG) -> dict[str, bytes | str]:
    return {
        "competition.yaml": config,
        "logo.png": b"\x89PNG\r\n\x1a\nlogo",
        "pages/terms.md": "Be fair.\n",
        "pages/participate.md": "Submit a zip with model.py.\n",
        "dev_phase/input_data/training_data": "1 1\n1 2\n2 1\n8 8\n8 9\n9 8\n",
        "dev_phase/input_data/training_label": "0\n0\n0\n1\n1\n1\n",
        "dev_phase/input_data/testing_data": "1 1\n2 2\n8 8\n9 9\n",
        # The last point is labelled against its cluster: a centroid model scores 0.75. The
        # comment (numpy skips it) is what a model must never read.
        "dev_phase/reference_data/testing_label": f"# {SECRET}\n0\n0\n1\n0\n",
        "ingestion_program/metadata": INGESTION_METADATA,
        "ingestion_program/ingestion.py": INGESTION,
        "scoring_program/metadata.yaml": "command: python3 scoring.py\n",
        "scoring_program/scoring.py": SCORING,
        "solution/model.py": MODEL,
    }


def code_zip(model: str = MODEL, *, metadata: bool = True) -> bytes:
    """A code submission as Codabench's iris starting kit ships one (``metadata`` and
    ``model.py``), or as the wheat-seeds kit does (``model.py`` alone)."""
    files = {"model.py": model}
    if metadata:
        files["metadata"] = (
            "description: Provides prediction model to be executed by the ingestion program\n"
        )
    return make_zip(files)


def imported(client: TestClient, host: Caller, slug: str, config: str = CONFIG) -> str:
    response = import_bundle(client, host, make_zip(bundle_files(config)), slug=slug)
    assert response.status_code == 201, response.text
    return opened(client, host, slug)[0]


def signed_in(client: TestClient, name: str) -> WebClient:
    """A browser signed in as ``name`` (given the pages' password first)."""
    factory = client.app.state.session_factory  # type: ignore[attr-defined]
    with factory() as session:
        set_password(
            session.scalars(select(User).where(User.name == name)).one(), password=PASSWORD
        )
        session.commit()
    web = WebClient(TestClient(client.app, base_url="http://testserver"))
    assert web.sign_in(name).status_code == 303
    return web


def log_of(client: TestClient, caller: Caller, sid: int) -> Any:
    return client.get(f"{API}/submissions/{sid}/log", headers=caller.headers)


# --- import -----------------------------------------------------------------------------------


def test_the_ingestion_program_and_input_data_are_kept_and_what_runs_is_named(
    client: TestClient, host: Caller
) -> None:
    model = read_bundle(make_zip(bundle_files()))
    ingestion = model.phases[0].ingestion
    assert (
        ingestion is not None and ingestion.command == INGESTION_METADATA.split(": ", 1)[1].strip()
    )
    assert sorted(f.path for f in ingestion.input_data) == [
        "testing_data",
        "training_data",
        "training_label",
    ]
    response = import_bundle(client, host, make_zip(bundle_files()), slug="points")
    assert response.status_code == 201, response.text
    warnings = response.json()["warnings"]
    assert any(
        "ingestion program in the jail" in w and "result submissions are scored directly" in w
        for w in warnings
    ), warnings
    assert not any("not imported" in w and "code submissions" in w for w in warnings), warnings
    assert any("codalab/codalab-legacy:py312" in w and "recorded" in w for w in warnings)
    with client.app.state.session_factory() as session:  # type: ignore[attr-defined]
        phase = session.scalars(
            select(Phase).join(Competition).where(Competition.slug == "points")
        ).one()
        spec = phase.scorer["ingestion"]
        assert spec["command"].startswith("python $ingestion_program/ingestion.py")
        assert [f["path"] for f in spec["program"]] == ["ingestion.py", "metadata"]
        assert [f["path"] for f in spec["input_data"]] == [
            "testing_data",
            "training_data",
            "training_label",
        ]
        # The answer key holds the reference data only; the input data is beside the program.
        assert [f["path"] for f in phase.scorer["reference"]] == ["testing_label"]


def test_an_ingestion_run_only_during_scoring_is_named_and_not_run() -> None:
    config = CONFIG.replace(
        "    ingestion_program: ingestion_program/\n",
        "    ingestion_program: ingestion_program/\n    ingestion_only_during_scoring: True\n",
    )
    model = read_bundle(make_zip(bundle_files(config)))
    assert model.phases[0].ingestion is None
    assert any("ingestion_only_during_scoring" in w for w in model.warnings)


def test_a_codalab_phase_s_ingestion_program_and_input_data_zips_are_kept() -> None:
    config = CODALAB_CONFIG.replace(
        "        reference_data: reference.zip\n        color: green\n",
        "        reference_data: reference.zip\n        color: green\n"
        "        ingestion_program: ingestion_program.zip\n"
        "        input_data: input_data.zip\n"
        "        is_scoring_only: False\n"
        "        hide_prediction_output: True\n",
    )
    assert config != CODALAB_CONFIG
    files = codalab_files(config)
    files["ingestion_program.zip"] = make_zip(
        {"metadata": INGESTION_METADATA, "ingestion.py": INGESTION}
    )
    files["input_data.zip"] = make_zip({"training_data": "1 1\n", "testing_data": "1 1\n"})
    model = read_bundle(make_zip(files))
    development, final = model.phases
    assert development.ingestion is not None and final.ingestion is None
    assert development.ingestion.hide_log is True
    assert [f.path for f in development.ingestion.input_data] == ["testing_data", "training_data"]
    assert any(
        "'Development'" in w and "ingestion program in the jail" in w for w in model.warnings
    )
    # A data member kept on the CodaLab server: named, and the phase takes results.
    files["competition.yaml"] = config.replace("input_data.zip", "9f1c-input-data-key")
    model = read_bundle(make_zip(files))
    assert model.phases[0].ingestion is None
    assert any("9f1c-input-data-key" in w and "not in the bundle" in w for w in model.warnings)


def test_the_ingestion_program_and_input_data_survive_an_export() -> None:
    imported = replace(read_bundle(make_zip(bundle_files())), warnings=())
    hidden = replace(
        imported,
        phases=tuple(
            replace(p, ingestion=replace(p.ingestion, hide_log=True)) if p.ingestion else p
            for p in imported.phases
        ),
    )
    for competition in (imported, hidden):
        exported = export_codabench(competition).data
        config = yaml.safe_load(zipfile.ZipFile(io.BytesIO(exported)).read("competition.yaml"))
        assert config["tasks"][0]["ingestion_program"].startswith("ingestion_program/")
        assert config["tasks"][0]["input_data"].startswith("input_data/")
        assert replace(read_bundle(exported), warnings=()) == competition


# --- code and results submissions, in the real jail ----------------------------------------------


def test_a_code_submission_runs_the_ingestion_then_the_scoring_program(
    jail: None, client: TestClient, host: Caller, alice: Caller, bob: Caller
) -> None:
    phase = imported(client, host, "points")
    got, own = submitted(client, alice, host, "points", phase, "code.zip", code_zip())
    assert got["status"] == "scored", got
    assert got["scores"]["accuracy"]["public"] == 0.75
    assert got["scores"]["duration"]["public"] >= 0  # written by the ingestion program
    rows = board(client, alice, "points", phase)["rows"]
    assert [(r["team"], r["score"]) for r in rows] == [("alice", 0.75)]
    # The team reads its code's run (the ingestion's output); nobody else does.
    seen = log_of(client, alice, own["id"])
    assert seen.status_code == 200, seen.text
    assert "Training Model" in seen.json()["log"] and "Moving on to scoring" in seen.json()["log"]
    assert SECRET not in seen.text
    assert log_of(client, bob, own["id"]).status_code == 404
    assert log_of(client, host, own["id"]).status_code == 200
    page = f"/c/points/submissions/{own['id']}"
    assert "Training Model" in signed_in(client, "alice").get(page).text
    assert signed_in(client, "bob").get(page).status_code == 404
    # model.py alone, as the wheat-seeds starting kit ships it, is code too.
    alone, _ = submitted(client, bob, host, "points", phase, "model.zip", code_zip(metadata=False))
    assert alone["status"] == "scored", alone
    assert alone["scores"]["accuracy"]["public"] == 0.75


def test_a_results_zip_to_the_same_phase_is_scored_directly(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    phase = imported(client, host, "points")
    results = make_zip({"prediction": "1\n1\n1\n1\n", "metadata.json": '{"duration": 7}'})
    got, own = submitted(client, alice, host, "points", phase, "results.zip", results)
    assert got["status"] == "scored", got
    assert got["scores"]["accuracy"]["public"] == 0.25
    assert got["scores"]["duration"]["public"] == 7
    assert log_of(client, alice, own["id"]).status_code == 404  # no code ran


FAILING_MODEL = """
class Model:
    def fit(self, X, y):
        raise ValueError("cannot fit these points")

    def predict(self, X):
        return X
"""


def test_a_model_that_raises_fails_with_a_short_message_and_the_tail_for_the_host(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    phase = imported(client, host, "points")
    got, own = submitted(client, alice, host, "points", phase, "code.zip", code_zip(FAILING_MODEL))
    assert got["status"] == own["status"] == "failed", got
    assert own["error"].startswith("your code failed in the ingestion program: it exited with")
    assert "log shows its output" in own["error"]
    assert "ValueError" not in own["error"] and "host_error" not in own
    assert "the ingestion step failed" in got["host_error"]
    assert "ValueError: cannot fit these points" in got["host_error"]
    assert got["refunded"] is False  # the code's own failure counts, as a code phase's does
    # Its own code's traceback is the team's to read.
    assert "cannot fit these points" in log_of(client, alice, own["id"]).json()["log"]


def test_a_phase_hiding_its_output_keeps_the_log_from_the_team(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    config = CONFIG.replace(
        "    execution_time_limit: 300\n", "    execution_time_limit: 300\n    hide_output: true\n"
    )
    phase = imported(client, host, "points", config)
    got, own = submitted(client, alice, host, "points", phase, "code.zip", code_zip(FAILING_MODEL))
    assert own["status"] == "failed" and "log shows" not in own["error"]
    assert log_of(client, alice, own["id"]).status_code == 404
    assert "cannot fit these points" in log_of(client, host, own["id"]).json()["log"]


SLOW_MODEL = """
import time


class Model:
    def fit(self, X, y):
        time.sleep(600)

    def predict(self, X):
        return X
"""


def test_a_model_past_the_phase_s_time_limit_is_stopped(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    config = CONFIG.replace("execution_time_limit: 300", "execution_time_limit: 2")
    phase = imported(client, host, "points", config)
    got, own = submitted(client, alice, host, "points", phase, "code.zip", code_zip(SLOW_MODEL))
    assert own["status"] == "failed", got
    assert "did not finish within the time limit of 2 s" in own["error"]
    assert "it was stopped" in got["host_error"]
    assert own["failure"] == "timeout"


# --- the answer key is not in the ingestion's jail -------------------------------------------------

ATTACK = """
import os

import numpy as np

REF = os.environ.get("ATTACK_REF", "/app/input/ref")
# Outside the jail (the control) a scratch folder of the test's, not the machine's whole /tmp.
TMP = os.environ.get("ATTACK_TMP", "/tmp")


SECRET = {backwards!r}[::-1]  # never whole in this file: walking /app finds this file too


def attempt(what, read):
    try:
        if SECRET in read():
            print("BREACH", what, flush=True)
            return True
        print("nothing", what, flush=True)
    except OSError as exc:
        print("blocked", what, type(exc).__name__, flush=True)
    return False


def everything(root):
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    found.append(f.read(1 << 20).decode("latin-1"))
            except OSError:
                pass
    return "".join(found)


CHEATED = attempt("the reference data", lambda: open(os.path.join(REF, "testing_label")).read())
attempt("the reference folder", lambda: str(os.listdir(REF)) + everything(REF))
attempt("the $hidden folder", lambda: everything("/app/input") + str(os.listdir("/app/input")))
attempt("every file under /app", lambda: everything(os.path.dirname(os.path.dirname(REF)) if "ATTACK_REF" in os.environ else "/app"))
attempt("every file under /tmp", lambda: everything(TMP))
print("app holds", sorted(os.listdir("/app")) if os.path.isdir("/app") else None, flush=True)


class Model:
    def fit(self, X, y):
        self.truth = None
        if CHEATED:
            self.truth = np.genfromtxt(os.path.join(REF, "testing_label"))
        self.classes = np.unique(y)
        self.centroids = np.array([X[y == c].mean(axis=0) for c in self.classes])

    def predict(self, X):
        if self.truth is not None:
            return self.truth
        distances = ((X[:, None, :] - self.centroids[None]) ** 2).sum(axis=2)
        return self.classes[distances.argmin(axis=1)]
"""


def test_a_model_reaching_for_the_answer_key_finds_nothing(
    jail: None, client: TestClient, host: Caller, alice: Caller, tmp_path: Path
) -> None:
    attack = textwrap.dedent(ATTACK).format(backwards=SECRET[::-1])
    assert SECRET not in attack
    files = bundle_files()

    # The control: the ingestion program with the same model outside the jail, the reference
    # data beside it as Codabench's scoring step has it: the model reads it and scores 1.0.
    for path, data in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(data) if isinstance(data, str) else target.write_bytes(data)
    code, output, scratch = tmp_path / "code", tmp_path / "output", tmp_path / "scratch"
    code.mkdir()
    output.mkdir()
    scratch.mkdir()
    (code / "model.py").write_text(attack)
    control = subprocess.run(
        [
            sys.executable,
            str(tmp_path / "ingestion_program" / "ingestion.py"),
            str(tmp_path / "dev_phase" / "input_data"),
            str(output),
            str(tmp_path / "ingestion_program"),
            str(code),
        ],
        env={
            **os.environ,
            "ATTACK_REF": str(tmp_path / "dev_phase" / "reference_data"),
            "ATTACK_TMP": str(scratch),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert control.returncode == 0, control.stderr
    assert "BREACH the reference data" in control.stdout, control.stdout
    assert "BREACH the reference folder" in control.stdout
    truth = (tmp_path / "dev_phase" / "reference_data" / "testing_label").read_text()
    predicted = (output / "prediction").read_text().split()
    assert [float(x) for x in predicted] == [float(x) for x in truth.split("\n")[1:] if x]

    # The same model submitted: the ingestion's jail holds no reference data anywhere.
    phase = imported(client, host, "points")
    got, own = submitted(
        client, alice, host, "points", phase, "code.zip", make_zip({"model.py": attack})
    )
    assert got["status"] == "scored", got
    assert got["scores"]["accuracy"]["public"] == 0.75  # not 1.0: it found no answer
    log = log_of(client, alice, own["id"]).json()["log"]
    assert "BREACH" not in log and SECRET not in log, log
    assert "blocked the reference data FileNotFoundError" in log
    assert "blocked the reference folder FileNotFoundError" in log
    assert "blocked the $hidden folder FileNotFoundError" in log
    assert "nothing every file under /app" in log
    assert "app holds ['ingested_program', 'input_data', 'output', 'program']" in log
    assert SECRET not in json.dumps(own)
