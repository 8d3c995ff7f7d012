"""Imported scoring programs (EvalAI, Codabench, CodaLab) run in the jail as their platforms run
them: :mod:`app.programs.jailed` lays out and runs one, :mod:`app.programs.inside` is its side in
the jail, :mod:`app.programs.verdict` turns what came back into scores or a failure."""
