"""Static checks of a scoring program: modules the runtime lacks, Python 2, run-time installs."""

from app.bundles.scan import scan_program


def scan(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return scan_program({k: v.encode() for k, v in files.items()}, label="the program")


def test_runtime_stdlib_and_local_modules_are_not_missing() -> None:
    report = scan(
        {
            "score.py": "import os, json\nimport numpy as np\nfrom sklearn.metrics import f1_score\nimport libscores\nfrom lib.helpers import x\nfrom . import sibling\n",
            "libscores.py": "",
            "lib/helpers.py": "",
        }
    )
    assert report.warnings == [] and not report.is_python2


def test_each_missing_module_is_named_once_with_its_first_line() -> None:
    report = scan({"a.py": "import torch\nimport nltk\n", "b.py": "import nltk.corpus\n"})
    assert report.missing_modules == ["torch", "nltk"]
    assert report.warnings == [
        "the program imports torch (a.py line 1), which the scorer runtime does not have",
        "the program imports nltk (a.py line 2), which the scorer runtime does not have",
    ]


def test_python2_print_statement() -> None:
    report = scan({"evaluate.py": "import sys\n\nprint 'score', 1\n"})
    assert report.python2 == ["evaluate.py line 3: a print statement"]


def test_python2_except_comma() -> None:
    report = scan({"evaluate.py": "try:\n    pass\nexcept IOError, e:\n    pass\n"})
    assert report.python2 == ["evaluate.py line 3: `except E, name:`"]


def test_python2_modules_and_builtins_in_code_that_parses() -> None:
    report = scan({"evaluate.py": "import cPickle\nfor i in xrange(3):\n    pass\n"})
    assert report.python2 == [
        "evaluate.py line 1: the Python 2 module cPickle",
        "evaluate.py line 2: the Python 2 built-in xrange()",
    ]
    assert report.missing_modules == []


def test_a_builtin_name_bound_in_the_file_is_not_python2() -> None:
    assert not scan({"a.py": "def unicode(x):\n    return x\nunicode(1)\n"}).is_python2


def test_a_print_function_call_is_python3() -> None:
    assert not scan({"a.py": "print('x')\nprint ('y')\n"}).is_python2


def test_installing_packages_at_run_time_is_named() -> None:
    report = scan(
        {"__init__.py": "import subprocess\nsubprocess.run(['pip', 'install', 'rouge'])\n"}
    )
    assert any("installs packages when it runs" in w and "line 2" in w for w in report.warnings)


def test_requirements_not_in_the_runtime_are_named() -> None:
    report = scan_program(
        {"requirements.txt": b"numpy==1.26\nscikit-learn\nrouge-score>=0.1\n# c\n"},
        label="the script",
    )
    assert report.warnings == [
        "the script: requirements.txt asks for rouge-score, which Podium does not install"
    ]


def test_syntax_that_is_neither_python_3_nor_2_is_named() -> None:
    report = scan({"a.py": "def (:\n"})
    assert report.warnings == ["the program: a.py line 1 is not valid Python 3 (invalid syntax)"]
