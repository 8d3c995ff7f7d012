"""Calls today's libraries removed, rewritten at import so that old scoring programs run as in
their platform's image: CodaLab's iris scorer (np.float) and Codabench's competition_15.zip
(yaml.load without a Loader)."""

import numpy as np
import yaml

from app.bundles.legacy import rewrite_legacy_calls


def test_numpy_aliases_become_the_builtins_and_real_numpy_names_stay() -> None:
    source = b"import numpy as np\na = np.array([1], dtype=np.float)\nb = np.float64(2)\nc = np.int_(3)\nd = numpy.int\n"
    out = rewrite_legacy_calls({"score.py": source})
    text = out.files["score.py"].decode()
    assert "dtype=float)" in text and "np.float64(2)" in text and "np.int_(3)" in text
    assert "d = int" in text and out.numpy == ["score.py"]
    namespace: dict[str, object] = {"numpy": np}
    exec(compile(text, "score.py", "exec"), namespace)  # our own test source, rewritten
    assert namespace["a"].dtype == np.float64  # type: ignore[attr-defined]


def test_yaml_load_without_a_loader_reads_as_before_and_one_with_a_loader_stays() -> None:
    source = b"import yaml\nm = yaml.load(text)\nn = yaml.load(text, Loader=yaml.SafeLoader)\n"
    out = rewrite_legacy_calls({"data_manager.py": source})
    text = out.files["data_manager.py"].decode()
    assert "m = yaml.full_load(text)" in text and "Loader=yaml.SafeLoader" in text
    namespace: dict[str, object] = {"yaml": yaml, "text": "a: 1\n"}
    exec(compile(text, "data_manager.py", "exec"), namespace)
    assert namespace["m"] == {"a": 1}
    assert out.sentences("the scoring program") == [
        "the scoring program: yaml.load() without a Loader, an error since PyYAML 6, is written "
        "yaml.full_load() in data_manager.py"
    ]


def test_a_program_without_them_is_left_as_it_is() -> None:
    files = {"score.py": b"import numpy as np\nx = np.float32(1)\n", "data.bin": b"\xff\x00"}
    out = rewrite_legacy_calls(files)
    assert out.files == files and out.sentences("p") == []


def test_pips_get_installed_distributions_answers_an_empty_list() -> None:
    # ChaLearn's libscores.py (CodaLab's AutoML bundles, the video forecasting hackathon).
    source = b"import os\nfrom pip import get_installed_distributions as lib\nx = lib()\n"
    out = rewrite_legacy_calls({"libscores.py": source})
    namespace: dict[str, object] = {}
    exec(compile(out.files["libscores.py"], "libscores.py", "exec"), namespace)
    assert namespace["x"] == [] and out.pip == ["libscores.py"]


def test_a_wb_file_written_a_string_is_opened_as_text_and_one_written_bytes_is_not() -> None:
    # CodaLab's test_competition scorer: Python 2 in nothing else, it writes a str to 'wb'.
    source = (
        b"score_file = open(name, 'wb')\nscore_file.write('set1_score: %0.6f\\n' % 1)\n"
        b'with open(other, "wb") as raw:\n    raw.write(payload)\n'
    )
    out = rewrite_legacy_calls({"score.py": source})
    text = out.files["score.py"].decode()
    assert "open(name, 'w')" in text and 'open(other, "wb")' in text
    assert out.text == ["score.py"]


def test_a_wb_file_whose_name_is_a_call_is_found_too() -> None:
    source = b"f = open(os.path.join(d, 'scores.txt'), 'wb')\nf.write('a: 1')\n"
    text = rewrite_legacy_calls({"score.py": source}).files["score.py"].decode()
    assert "open(os.path.join(d, 'scores.txt'), 'w')" in text


def test_a_program_that_pickles_keeps_its_modes() -> None:
    # Codabench's competition_15.zip data_manager.py: `f` is a pickle file in one branch and a
    # text file (opened 'w') in the other.
    source = b"import pickle\nwith open(n, 'wb') as f:\n    pickle.dump(x, f)\nf.write('Date')\n"
    assert rewrite_legacy_calls({"dm.py": source}).files["dm.py"] == source


def test_a_yaml_load_whose_loader_is_on_the_next_line_is_left_alone() -> None:
    source = b"import yaml\nm = yaml.load(open(name),\n              yaml.SafeLoader)\nn = yaml.load(open(f))\n"
    text = rewrite_legacy_calls({"a.py": source}).files["a.py"].decode()
    assert "m = yaml.load(open(name)," in text and "n = yaml.full_load(open(f))" in text
