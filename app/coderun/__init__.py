"""Code competitions' run step: a participant's script, notebook or zip run in the jail on the
competition's data, Kaggle's layout, producing ``/kaggle/working/submission.csv``.

:mod:`app.coderun.code` reads and checks the upload, :mod:`app.coderun.runner` runs it
(:mod:`app.coderun.inside` is its side in the jail), :mod:`app.coderun.outcome` is the typed result
and :mod:`app.coderun.runtime` lists what the code can count on. This file imports nothing, so
that nothing of the server is needed to read the package inside the jail.
"""
