"""A bundle's HTML pages become Markdown (Podium escapes raw HTML in a description), keeping
their shape; the other pages follow the description as sections."""

from app.bundles import read_bundle
from app.bundles.markdown import description_markdown, html_to_markdown
from app.web.markdown import render_markdown
from tests.bundles.builders import evalai_files, make_zip


def test_html_keeps_its_shape_as_markdown() -> None:
    html = (
        "<h2>Data</h2><p>See <a href='https://x.org'>here</a> and <b>bold</b>, <em>it</em>.</p>"
        "<ul><li>one</li><li>two</li></ul><ol><li>a</li><li>b</li></ol>"
        "<pre>x = 1\n  y</pre><p>a <code>f()</code> call<br>next line</p>"
        "<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "<img src='https://x.org/a.png' alt='plot'><script>alert(1)</script>"
    )
    assert html_to_markdown(html) == (
        "## Data\n\nSee [here](https://x.org) and **bold**, *it*.\n\n- one\n- two\n\n"
        "1. a\n2. b\n\n```\nx = 1\n  y\n```\n\na `f()` call  \nnext line\n\n"
        "| k | v |\n| --- | --- |\n| 1 | 2 |\n\n![plot](https://x.org/a.png)\n"
    )


def test_the_pages_follow_the_description_and_render_without_raw_html() -> None:
    text = description_markdown(read_bundle(make_zip(evalai_files())))
    assert text.startswith("# Random\n\nGuess.\n\n## Evaluation\n")
    assert "## Terms and conditions\n\nBe fair." in text
    shown = str(render_markdown(text))
    assert "<h1>Random</h1>" in shown and "&lt;" not in shown and "alert" not in shown
