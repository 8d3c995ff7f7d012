"""Organiser-supplied metrics with Kaggle's ``score(solution, submission, row_id_column_name)``.

The public API lives in :mod:`app.custom_metrics.sandbox`. This file imports nothing so that the
sandboxed child process (:mod:`app.custom_metrics.child`) starts without the server's modules.
"""
