"""The one jail for untrusted code: organisers' custom metrics and participants' code runs.

:mod:`app.jail.bwrap` builds the bubblewrap command and proves once per process that the jail
isolates; :mod:`app.jail.cgroups` makes a run's control groups (processes, memory, CPU) where the
machine allows; :mod:`app.jail.process` starts a jailed command, reads its output within budgets
and kills everything it started. Each caller brings its own limits and its own layout; a hardening
made here lands for every caller at once.
"""
