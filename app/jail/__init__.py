"""The one jail for untrusted code: organisers' custom metrics and imported scoring programs,
participants' code runs, simulation agents and host environments.

:mod:`app.jail.runner` is the one runner every kind goes through (``run_jailed(spec) ->
Verdict``: start, read within budgets, kill all, one verdict shape), and :mod:`app.jail.inside`
its half inside the jail; each kind is a small adapter that lays out its files, sets its limits
and reads the verdict in its own words. :mod:`app.jail.bwrap` builds the bubblewrap command and
proves once per process that the jail isolates; :mod:`app.jail.cgroups` makes a run's control
groups (processes, memory, CPU) where the machine allows; :mod:`app.jail.process` starts a
command, reads its pipes within budgets and kills everything it started. A hardening made here
lands for every kind at once.
"""
