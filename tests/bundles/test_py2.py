"""CodaLab's Python 2 programs converted at import: fissix's fixers plus the idioms a plain
conversion misses, each named after the bundle it comes from."""

from app.bundles.py2 import convert_files


def _run(source: bytes, **names: object) -> dict[str, object]:
    namespace: dict[str, object] = dict(names)
    exec(compile(source, "converted.py", "exec"), namespace)  # our own test sources, converted
    return namespace


def test_tabs_mixed_with_spaces_indent_as_python2_read_them() -> None:
    # Compute-pi's evaluate.py: a tab-indented line inside a space-indented block.
    source = b"if True:\n    for x in [1]:\n\ty = 2\n"
    converted = convert_files({"e.py": b"print 'a'\n" + source})
    assert converted.failed == []
    assert _run(converted.files["e.py"])["y"] == 2


def test_integer_division_floors_as_python2_and_float_division_does_not() -> None:
    converted = convert_files({"e.py": b"print 'x'\na = 7 / 2\nb = 7.0 / 2\nc = -7 / 2 / 1\n"})
    ns = _run(converted.files["e.py"])
    assert (ns["a"], ns["b"], ns["c"]) == (3, 3.5, -4)
    assert converted.divisions == 4


def test_a_file_with_future_division_keeps_true_division() -> None:
    source = b"from __future__ import division\nprint 'x'\na = 7 / 2\n"
    converted = convert_files({"e.py": source})
    assert _run(converted.files["e.py"])["a"] == 3.5 and converted.divisions == 0


def test_text_written_to_a_wb_file_is_written_as_text_unless_the_program_works_in_bytes() -> None:
    # Yellow world's evaluate.py writes "correct:1" to a file opened 'wb'.
    text = convert_files({"e.py": b"print 'x'\nf = open(name, 'wb')\nf.write('correct:1')\n"})
    assert b"open(name, 'w')" in text.files["e.py"] and text.text_modes == ["e.py"]
    binary = convert_files({"e.py": b"import cPickle\nprint 'x'\nf = open(name, 'wb')\n"})
    assert b"open(name, 'wb')" in binary.files["e.py"] and binary.text_modes == []


def test_iteritems_and_has_key_become_python3() -> None:
    source = b"d = {'a': 1}\nprint 'x'\nok = d.has_key('a')\nfor k, v in d.iteritems(): s = v\n"
    ns = _run(convert_files({"e.py": source}).files["e.py"])
    assert ns["ok"] is True and ns["s"] == 1


def test_what_does_not_parse_is_left_and_named() -> None:
    converted = convert_files({"e.py": b'print "x"\nif True\n'})
    assert converted.converted == [] and converted.failed[0].startswith("e.py: ")
