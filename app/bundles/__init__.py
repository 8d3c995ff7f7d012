"""Competition bundles: EvalAI, Codabench v2 and CodaLab v1.5 read into one model, and Codabench v2
written from it. Nothing here touches the database or runs a bundle's code: the service stores the
model, the jail runs the program with the layout ``runner`` builds.

The doors: :func:`read_bundle`, :func:`to_api_body`, :func:`export_codabench`, and in ``runner``
the layout and result parsers for each kind of scoring program.
"""

from app.bundles.api import to_api_body
from app.bundles.archive import Limits
from app.bundles.errors import BundleError
from app.bundles.export import Export, export_codabench
from app.bundles.model import (
    BundleFile,
    Column,
    Competition,
    Computed,
    DataFile,
    EntryField,
    Ingestion,
    MetricRef,
    Page,
    Phase,
    Program,
    Split,
    Task,
)
from app.bundles.read import read_bundle

__all__ = [
    "BundleError",
    "BundleFile",
    "Column",
    "Competition",
    "Computed",
    "DataFile",
    "EntryField",
    "Export",
    "Ingestion",
    "Limits",
    "MetricRef",
    "Page",
    "Phase",
    "Program",
    "Split",
    "Task",
    "export_codabench",
    "read_bundle",
    "to_api_body",
]
