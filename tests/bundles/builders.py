"""Bundles written in the shapes real ones take (EvalAI-Starters, Codabench's iris, CodaLab's
hello-world and compute-pi examples), with our own content."""

from __future__ import annotations

import io
import stat
import textwrap
import zipfile
from collections.abc import Mapping

Files = Mapping[str, bytes | str]


def make_zip(files: Files, *, wrap: str | None = None, macosx: bool = False) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            name = f"{wrap}/{path}" if wrap else path
            archive.writestr(name, data.encode() if isinstance(data, str) else data)
            if macosx:
                folder, _, base = name.rpartition("/")
                junk = f"__MACOSX/{folder}/._{base}" if folder else f"__MACOSX/._{base}"
                archive.writestr(junk, b"\x00\x05\x16\x07junk")
        if macosx:
            archive.writestr(".DS_Store", b"\x00\x00\x00\x01Bud1")
    return out.getvalue()


def symlink_zip(name: str, target: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        info = zipfile.ZipInfo(name)
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, target)
    return out.getvalue()


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# --- EvalAI -------------------------------------------------------------------------------------

EVALAI_CONFIG = dedent(
    """
    # As EvalAI-Starters writes it.
    title: Random Number Generator Challenge
    short_description: Random numbers for each submission
    description: templates/description.html
    evaluation_details: templates/evaluation_details.html
    terms_and_conditions: templates/terms_and_conditions.html
    image : logo.png
    submission_guidelines: templates/submission_guidelines.html
    evaluation_script: evaluation_script.zip
    remote_evaluation: False
    is_docker_based: False
    start_date: 2019-01-01 00:00:00
    end_date: 2099-05-31 23:59:59
    published: True

    leaderboard:
      - id: 1
        schema:
          {
            "labels": ["Metric1", "Metric2", "Mean Error", "Total"],
            "default_order_by": "Total",
            "metadata": {"Mean Error": {"sort_ascending": true}},
          }

    challenge_phases:
      - id: 1
        name: Dev Phase
        description: templates/challenge_phase_1_description.html
        leaderboard_public: False
        is_public: True
        start_date: 2019-01-19 00:00:00
        end_date: 2099-04-25 23:59:59
        test_annotation_file: annotations/test_annotations_devsplit.json
        codename: dev
        max_submissions_per_day: 5
        max_submissions_per_month: 50
        max_submissions: 50
        submission_meta_attributes:
          - name: TextAttribute
            description: Sample
            type: text
          - name: SingleOptionAttribute
            description: Sample
            type: radio
            options: ["A", "B", "C"]
            required: True
          - name: TrueFalseField
            description: Sample
            type: boolean
        default_submission_meta_attributes:
          - name: method_name
            is_visible: True
        is_restricted_to_select_one_submission: False
      - id: 2
        name: Test Phase
        description: templates/challenge_phase_2_description.html
        leaderboard_public: True
        is_public: True
        start_date: "2019-01-01 00:00:00"
        end_date: 2099-05-24 23:59:59
        test_annotation_file: annotations/test_annotations_testsplit.json
        codename: test
        max_submissions_per_day: 5
        max_submissions: 50
        is_restricted_to_select_one_submission: True

    dataset_splits:
      - id: 1
        name: Train Split
        codename: train_split
      - id: 2
        name: Test Split
        codename: test_split

    challenge_phase_splits:
      - challenge_phase_id: 1
        leaderboard_id: 1
        dataset_split_id: 1
        visibility: 1
        leaderboard_decimal_precision: 2
        is_leaderboard_order_descending: True
      - challenge_phase_id: 2
        leaderboard_id: 1
        dataset_split_id: 1
        visibility: 3
        leaderboard_decimal_precision: 4
        is_leaderboard_order_descending: True
      - challenge_phase_id: 2
        leaderboard_id: 1
        dataset_split_id: 2
        visibility: 1
    """
)

EVALAI_INIT = "from .main import evaluate\n"
EVALAI_MAIN = dedent(
    '''
    import json

    import numpy as np

    from .utils import clamp


    def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
        """Scores per split, as EvalAI's worker expects them (numpy scalars, as real ones give)."""
        with open(test_annotation_file) as f:
            truth = json.load(f)
        with open(user_submission_file) as f:
            guess = json.load(f)
        hits = np.mean([guess.get(k) == v for k, v in truth.items()])
        team = kwargs["submission_metadata"]["participant_team_name"]
        output = {}
        if phase_codename == "dev":
            output["result"] = [{"train_split": {"Metric1": clamp(hits), "Total": hits + 1}}]
        elif phase_codename == "test":
            output["result"] = [
                {"train_split": {"Metric1": clamp(hits), "Total": np.float64(1.0)}},
                {"test_split": {"Metric1": np.float32(0.25), "Total": hits}},
            ]
        output["submission_result"] = {"team": team, "hits": hits}
        return output
    '''
)
EVALAI_UTILS = "def clamp(x):\n    return max(0.0, min(1.0, x))\n"


def evalai_files(
    *, script_as_dir: bool = False, config: str = EVALAI_CONFIG, script: Files | None = None
) -> dict[str, bytes | str]:
    script = script or {
        "__init__.py": EVALAI_INIT,
        "main.py": EVALAI_MAIN,
        "utils.py": EVALAI_UTILS,
    }
    files: dict[str, bytes | str] = {
        "challenge_config.yaml": config,
        "templates/description.html": "<h1>Random</h1><script>alert(1)</script><p onclick='x()'>Guess.</p>",
        "templates/evaluation_details.html": "<p>Total is the sum.</p>",
        "templates/terms_and_conditions.html": "<p>Be fair.</p>",
        "templates/submission_guidelines.html": "<p>Upload a JSON file.</p>",
        "templates/challenge_phase_1_description.html": "<p>Dev</p>",
        "templates/challenge_phase_2_description.html": "<p>Test</p>",
        "annotations/test_annotations_devsplit.json": '{"a": 1, "b": 2}',
        "annotations/test_annotations_testsplit.json": '{"a": 1, "b": 2, "c": 3, "d": 4}',
        "logo.png": b"\x89PNG\r\n\x1a\nlogo",
    }
    if script_as_dir:
        for path, data in script.items():
            files[f"evaluation_script/{path}"] = data
    else:
        files["evaluation_script.zip"] = make_zip(script)
    return files


# --- Codabench v2 ---------------------------------------------------------------------------------

CODABENCH_CONFIG = dedent(
    """
    # In the shape of Codabench's iris example.
    version: 2 # this means that it is a Codabench bundle
    title: Iris flowers
    description: Predict the species of an iris from four measurements.
    image: logo.png
    registration_auto_approve: True
    docker_image: 'codalab/codalab-legacy:py37'
    terms: pages/terms.md
    pages:
      - title: Overview
        file: pages/overview.html
      - title: Data
        file: pages/data.md
      - title: Evaluation
        file: pages/evaluation.html
    fact_sheet:
      method:
        key: method
        type: text
        title: Method
        selection: ""
        is_required: "True"
        is_on_leaderboard: "True"
      used_external_data:
        key: used_external_data
        type: checkbox
        title: External data?
        selection: [True, False]
        is_required: "False"
        is_on_leaderboard: "False"
    tasks:
    - index: 0
      name: Development Task
      reference_data: reference_data/valid
      scoring_program: scoring_program
    - index: 1
      name: Final Task
      reference_data: reference_data/test
      scoring_program: scoring_program
      ingestion_program: ingestion_program
      input_data: input_data
    solutions: []
    phases:
    - index: 0
      name: Development
      description: Feedback on the validation set.
      start: 1-1-2026 # Month/Day/Year
      end: 8-7-2026
      max_submissions_per_day: 5
      max_submissions: 100
      execution_time_limit: 500
      tasks:
      - 0
    - index: 1
      name: Final
      start: 8-8-2026 # Never ends
      max_submissions_per_day: 2
      max_submissions: 10
      tasks:
      - 1
    leaderboards:
    - index: 0
      title: Results
      key: Results
      primary_index: 2
      submission_rule: Force_Last
      columns:
      - title: Accuracy set 1
        key: set1_score
        index: 0
        sorting: desc
        precision: 4
      - title: Accuracy set 2
        key: set2_score
        index: 1
        sorting: desc
        computation: null
        computation_indexes: null
      - title: Mean accuracy
        key: mean_score
        index: 2
        sorting: desc
        computation: avg
        computation_indexes: [0, 1]
      - title: Duration
        key: Duration
        index: 3
        sorting: desc
        hidden: true
    """
)

CODABENCH_SCORER = dedent(
    """
    import json
    import os
    import sys

    import numpy as np
    import yaml

    reference_dir = "/app/input/ref"
    prediction_dir = "/app/input/res"
    score_dir = "/app/output"
    truth = np.loadtxt(os.path.join(reference_dir, "iris_valid.solution"))
    pred = np.loadtxt(os.path.join(prediction_dir, "iris_valid.predict"))
    with open(os.path.join(prediction_dir, "metadata")) as f:  # left by the prediction step
        duration = yaml.safe_load(f).get("elapsedTime")
    with open(os.path.join(score_dir, "scores.json"), "w") as f:
        scores = {"set1_score": float(np.mean(truth == pred)), "set2_score": 0.5}
        json.dump({**scores, "Duration": duration}, f)
    """
)


def codabench_files(config: str = CODABENCH_CONFIG) -> dict[str, bytes | str]:
    return {
        "competition.yaml": config,
        "logo.png": b"\x89PNG\r\n\x1a\nlogo",
        "pages/terms.md": "Be fair.\n",
        "pages/overview.html": "<p>Iris <b>flowers</b></p><iframe src=x></iframe>",
        "pages/data.md": "# Data\nFour measurements.\n",
        "pages/evaluation.html": "<p>Accuracy.</p>",
        "reference_data/valid/iris_valid.solution": "1\n2\n0\n",
        "reference_data/test/iris_test.solution": "0\n0\n1\n",
        "scoring_program/metadata.yaml": "command: python3 /app/program/score.py\n",
        "scoring_program/score.py": CODABENCH_SCORER,
        "ingestion_program/metadata.yaml": "command: python3 /app/program/ingestion.py\n",
        "ingestion_program/ingestion.py": "print('run the model')\n",
        "input_data/iris_test.data": "5.1 3.5 1.4 0.2\n",
    }


# --- CodaLab v1.5 ---------------------------------------------------------------------------------

CODALAB_CONFIG = dedent(
    """
    title: Compute pi
    description: Compute pi as precisely as you can.
    image: logo.jpg
    has_registration: False
    html:
        overview: overview.html
        evaluation: evaluation.html
        terms: terms_and_conditions.html
        data: data.html
    phases:
        1:
            phasenumber: 1
            label: "Development"
            start_date: 2013-06-30
            max_submissions: 100
            max_submissions_per_day: 5
            scoring_program: program.zip
            reference_data: reference.zip
            color: green
        2:
            phasenumber: 2
            label: "Final"
            start_date: 2013-09-30
            max_submissions: 3
            scoring_program: program.zip
            reference_data: reference.zip
            leaderboard_management_mode: hide_results
            force_best_submission_to_leaderboard: True
    end_date: 2013-12-31
    leaderboard:
        leaderboards:
            Results: &RESULTS
                label: Results
                rank: 1
        columns:
            Difference:
                leaderboard: *RESULTS
                label: Difference
                numeric_format: 6
                rank: 2
            correct:
                leaderboard: *RESULTS
                label: Correct
                rank: 1
                sort: asc
    """
)

# Compute_pi's evaluate.py as CodaLab ran it: Python 2, ``scores.txt`` without a space after the
# colon.
CODALAB_EVALUATE_PY2 = dedent(
    """
    #!/usr/bin/env python
    import sys, os, os.path

    input_dir = sys.argv[1]
    output_dir = sys.argv[2]

    submit_dir = os.path.join(input_dir, 'res')
    truth_dir = os.path.join(input_dir, 'ref')

    if not os.path.isdir(submit_dir):
        print "%s doesn't exist" % submit_dir

    if os.path.isdir(submit_dir) and os.path.isdir(truth_dir):
        output_filename = os.path.join(output_dir, 'scores.txt')
        output_file = open(output_filename, 'wb')
        output_file.write("Difference:0\\n")
        output_file.write("correct:1")
        output_file.close()
    """
)

# The same program converted to Python 3, still in CodaLab's shape: the folders as arguments, the
# truth beside the answer, ``scores.txt`` written ``key:value`` without a space.
CODALAB_EVALUATE = dedent(
    """
    #!/usr/bin/env python
    import os
    import os.path
    import sys

    input_dir = sys.argv[1]
    output_dir = sys.argv[2]

    submit_dir = os.path.join(input_dir, 'res')
    truth_dir = os.path.join(input_dir, 'ref')

    if not os.path.isdir(submit_dir):
        print("%s doesn't exist" % submit_dir)

    if os.path.isdir(submit_dir) and os.path.isdir(truth_dir):
        truth = float(open(os.path.join(truth_dir, 'answer.txt')).read())
        answer = float(open(os.path.join(submit_dir, 'answer.txt')).read())
        difference = abs(truth - answer)
        with open(os.path.join(output_dir, 'scores.txt'), 'w') as output_file:
            output_file.write("Difference:%f\\n" % difference)
            output_file.write("correct:%d\\n" % (difference < 0.01))
    """
)


def codalab_files(
    config: str = CODALAB_CONFIG, evaluate: str = CODALAB_EVALUATE
) -> dict[str, bytes | str]:
    return {
        "competition.yaml": config,
        "logo.jpg": b"\xff\xd8\xff\xe0logo",
        "overview.html": "<p>Compute pi.</p>",
        "evaluation.html": "<p>Difference to pi.</p>",
        "terms_and_conditions.html": "<p>Be fair.</p>",
        "data.html": "<p>No data.</p>",
        "program.zip": make_zip(
            {
                "metadata": "command: python $program/evaluate.py $input $output\ndescription: Compute pi\n",
                "evaluate.py": evaluate,
            }
        ),
        "reference.zip": make_zip({"answer.txt": "3.14159265359"}),
    }
