"""The pieces pages are built from: sanitised Markdown and the SVG charts."""

import re
from datetime import UTC, datetime, timedelta

from app.web.charts import confusion_heatmap, score_over_time
from app.web.markdown import render_markdown


def test_markdown_is_rendered_and_anything_active_is_removed():
    html = str(
        render_markdown(
            "## Data\n\n*x* `y`\n\n<script>alert(1)</script>\n\n"
            '<a href="#" onclick="x()">raw</a> [ok](https://example.org) [bad](javascript:alert(1))'
            "\n\n![i](data:text/html,hi)"
        )
    )
    assert "<h2>Data</h2>" in html and "<em>x</em>" in html and "<code>y</code>" in html
    assert "<script" not in html and "&lt;script&gt;" in html  # shown as text
    assert re.search(r"<[^>]*\bonclick=", html) is None and '<a href="#"' not in html
    assert 'href="https://example.org"' in html and 'rel="nofollow noopener noreferrer"' in html
    assert 'href="javascript' not in html and 'src="data:' not in html


def test_score_chart_states_the_direction_labels_its_axes_and_escapes_names():
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    series = {
        "<b>team</b>": [(t0, 0.5), (t0 + timedelta(hours=3), 0.7)],
        "other": [(t0 + timedelta(hours=1), 0.6)],
    }
    up = str(score_over_time(series, maximize=True, metric="roc_auc"))
    down = str(score_over_time(series, maximize=False, metric="rmse"))
    assert "↑ higher is better" in up and "↓ lower is better" in down
    assert "Submission time (UTC)" in up and "Best public roc_auc" in up
    assert "<b>team</b>" not in up and "&lt;b&gt;team&lt;/b&gt;" in up
    assert up.count("<path") == 2 and up.count("<circle") == 3
    assert str(score_over_time({}, maximize=True, metric="x")) == ""


def test_heatmap_has_a_cell_per_pair_with_its_count():
    svg = str(confusion_heatmap(["cat", "<dog>"], [[5, 1], [2, 0]]))
    assert svg.count("<rect") == 4
    assert "&lt;dog&gt;" in svg and "<dog>" not in svg
    assert "true cat, predicted &lt;dog&gt;: 1 (17% of the row)" in svg
    assert "Predicted label" in svg and "True label" in svg
